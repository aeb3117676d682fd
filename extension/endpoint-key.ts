// The endpoint's API key, kept in VS Code's SecretStorage (the OS keychain), never in
// settings.json. The sidecar gets it in initializationOptions when it starts, and in a
// didChangeConfiguration push (`settings.leapfrog.endpointApiKey`) when it changes here or
// in another window.
import * as vscode from 'vscode';

const SECRET = 'leapfrog.endpointApiKey';

export class EndpointKey implements vscode.Disposable {
  private value: string | undefined;
  private readonly changed = new vscode.EventEmitter<string | undefined>();
  /** Fires with the new key (undefined: removed). */
  readonly onDidChange = this.changed.event;
  private readonly watch: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.watch = secrets.onDidChange((e) => {
      if (e.key === SECRET) void this.reload();
    });
  }

  get current(): string | undefined {
    return this.value;
  }

  /** Reads the stored key; call before the sidecar starts. */
  async load(): Promise<void> {
    try {
      this.value = (await this.secrets.get(SECRET)) || undefined;
    } catch {
      // No keychain (some remote and headless hosts): no key rather than no extension.
      this.value = undefined;
    }
  }

  /** "Leapfrog: Set Endpoint API Key…": asks for the key; an empty answer removes it. */
  async prompt(): Promise<void> {
    const input = await vscode.window.showInputBox({
      title: 'Leapfrog: Endpoint API Key',
      prompt:
        'The key leapfrog.endpoint wants (sent as "Authorization: Bearer …"). ' +
        "Kept in VS Code's secret storage. Leave empty to remove it.",
      password: true,
      ignoreFocusOut: true,
      placeHolder: this.value ? 'a key is set; empty removes it' : 'sk-…',
    });
    if (input === undefined) return; // dismissed: nothing changes
    const key = input.trim();
    if (key) await this.secrets.store(SECRET, key);
    else await this.secrets.delete(SECRET);
    await this.reload();
    void vscode.window.showInformationMessage(
      key ? 'Leapfrog: endpoint API key saved.' : 'Leapfrog: endpoint API key removed.',
    );
  }

  dispose(): void {
    this.watch.dispose();
    this.changed.dispose();
  }

  private async reload(): Promise<void> {
    const before = this.value;
    await this.load();
    if (this.value !== before) this.changed.fire(this.value);
  }
}
