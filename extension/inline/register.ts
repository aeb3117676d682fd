// Registers the inline provider. VS Code waits 50 ms after a keystroke before it asks any
// inline provider (its "InlineCompletionsDebounce"), unless the provider's registration says
// otherwise: measured in code-server 4.100.3, that wait was a third of the keystroke → ghost
// text time with the bundled model (keydown → provider call ~60 ms of ~210). The provider
// debounces by itself, by the engine's measured speed (AdaptiveDebounce), so it asks VS Code
// for no wait of its own. The third argument (InlineCompletionItemProviderMetadata) is not
// yet in @types/vscode 1.100; VS Code reads its `debounceDelayMs` at registration, and a
// version that does not know it ignores it (the 50 ms wait then stays, nothing breaks).
import * as vscode from 'vscode';

/** VS Code's own wait before asking this provider, in ms (our AdaptiveDebounce replaces it). */
export const VSCODE_DEBOUNCE_MS = 0;

type RegisterWithMetadata = (
  selector: vscode.DocumentSelector,
  provider: vscode.InlineCompletionItemProvider,
  metadata: { debounceDelayMs?: number; displayName?: string },
) => vscode.Disposable;

export function registerInlineProvider(
  provider: vscode.InlineCompletionItemProvider,
): vscode.Disposable {
  const register = vscode.languages.registerInlineCompletionItemProvider as RegisterWithMetadata;
  return register.call(vscode.languages, { pattern: '**' }, provider, {
    debounceDelayMs: VSCODE_DEBOUNCE_MS,
    displayName: 'Leapfrog',
  });
}
