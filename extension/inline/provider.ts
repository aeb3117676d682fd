// Ghost text. The provider sends `textDocument/inlineCompletion` itself (not through the
// language client's built-in provider) so that it can debounce by measured latency, cancel
// the stale request as soon as the user types on, serve typed-ahead results from memory, and
// report shown/accepted events to the engine's local statistics.
import * as vscode from 'vscode';
import {
  InlineCompletionRequest,
  type InlineCompletionItem as LspItem,
  type InlineCompletionList as LspList,
  type InlineCompletionParams,
} from 'vscode-languageclient/node';
import {
  CompletionAcceptedNotification,
  CompletionShownNotification,
  type LeapfrogInlineCompletionItem,
} from '../../engine/protocol';
import { completionSettings } from '../config';
import type { CompletionGate } from '../gate';
import type { Sidecar } from '../sidecar';
import { AdaptiveDebounce } from './latency';
import { TypedAheadCache } from './typed-ahead';
import { Prefetcher } from './prefetch';
import { GrowthWatch, type GrowthPlace } from './growth-watch';

export const ACCEPTED_COMMAND = 'leapfrog.completionAccepted';

export class InlineProvider implements vscode.InlineCompletionItemProvider, vscode.Disposable {
  private readonly debounce = new AdaptiveDebounce();
  private readonly cache = new TypedAheadCache();
  private inflight: vscode.CancellationTokenSource | undefined;
  private lastShown = '';
  private readonly prefetcher: Prefetcher;
  private readonly growth = new GrowthWatch();
  private readonly growthSub: vscode.Disposable;

  constructor(
    private readonly sidecar: Sidecar,
    private readonly gate: CompletionGate,
  ) {
    this.prefetcher = new Prefetcher(sidecar, gate);
    // A new engine (restart, other model) makes remembered suggestions meaningless.
    sidecar.onDidStartClient(() => this.cache.clear());
    // A partial answer finished growing on the engine: where nothing moved, show all of it.
    this.growthSub = sidecar.onCompletionGrown((p) => {
      if (this.growth.grown(p.uri, p.position, editorPlace(), Date.now())) {
        void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      }
    });
  }

  get latencyMs(): number {
    return this.debounce.latencyMs;
  }

  async provideInlineCompletionItems(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    ctx: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined> {
    if (!this.gate.allows(doc.languageId)) return undefined;
    const editor = vscode.window.activeTextEditor;
    // Several cursors: one suggestion cannot fit them all, so offer none.
    if (editor && editor.document === doc && editor.selections.length > 1) return undefined;
    const selected = ctx.selectedCompletionInfo;
    this.growth.clear();

    if (!selected) {
      const rest = this.cache.lookup(doc, pos);
      if (rest) return this.items(doc, pos, rest, undefined);
    }

    this.inflight?.cancel();
    const cts = new vscode.CancellationTokenSource();
    this.inflight = cts;
    const sub = token.onCancellationRequested(() => cts.cancel());
    try {
      const explicit = ctx.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
      const wait = explicit ? 0 : this.debounce.delay(completionSettings().debounceMs);
      if (wait > 0 && !(await sleep(wait, cts.token))) return undefined;
      const client = this.sidecar.client;
      if (!client || cts.token.isCancellationRequested) return undefined;

      const params: InlineCompletionParams & { maxTokens?: number } = {
        textDocument: { uri: doc.uri.toString() },
        position: { line: pos.line, character: pos.character },
        context: {
          triggerKind: ctx.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 1 : 2,
          selectedCompletionInfo: selected
            ? { range: client.code2ProtocolConverter.asRange(selected.range), text: selected.text }
            : undefined,
        },
        // Not part of LSP; a server that knows it caps the suggestion's length.
        maxTokens: completionSettings().maxTokens,
      };
      const t0 = Date.now();
      let result: LspItem[] | LspList | null;
      try {
        result = await client.sendRequest(InlineCompletionRequest.type, params, cts.token);
      } catch {
        // Cancelled, superseded, or the engine went away mid-request: fail quietly.
        return undefined;
      }
      if (!cts.token.isCancellationRequested) this.debounce.record(Date.now() - t0);
      const first = (Array.isArray(result) ? result : (result?.items ?? []))[0];
      if (!first || token.isCancellationRequested) return undefined;
      const text = typeof first.insertText === 'string' ? first.insertText : first.insertText.value;
      if (!text) return undefined;
      const r = first.range;
      const atCursor =
        !r ||
        (r.start.line === pos.line &&
          r.start.character === pos.character &&
          r.end.line === pos.line &&
          r.end.character === pos.character);
      // A partial answer (the deadline came first) grows on the server: typing on asks it
      // for the rest rather than serving the part this side has.
      const partial = (first as Partial<LeapfrogInlineCompletionItem>).partial === true;
      if (!selected && atCursor && !partial) this.cache.remember(doc, pos, text);
      if (!selected && atCursor && partial) {
        this.growth.expect(
          {
            uri: doc.uri.toString(),
            version: doc.version,
            line: pos.line,
            character: pos.character,
          },
          Date.now(),
        );
      }
      return this.items(doc, pos, text, selected, atCursor ? undefined : r);
    } finally {
      sub.dispose();
      if (this.inflight === cts) this.inflight = undefined;
      cts.dispose();
    }
  }

  private items(
    doc: vscode.TextDocument,
    pos: vscode.Position,
    text: string,
    selected: vscode.SelectedCompletionInfo | undefined,
    lspRange?: {
      start: { line: number; character: number };
      end: { line: number; character: number };
    },
  ): vscode.InlineCompletionItem[] {
    let insert = text;
    let range = lspRange
      ? new vscode.Range(
          lspRange.start.line,
          lspRange.start.character,
          lspRange.end.line,
          lspRange.end.character,
        )
      : new vscode.Range(pos, pos);
    if (selected) {
      // VS Code shows ghost text with an IntelliSense item selected only if it extends that
      // item; a server that continued after the item gets the item's text put in front.
      if (!insert.startsWith(selected.text)) insert = selected.text + insert;
      range = selected.range;
    }
    this.reportShown(doc, insert);
    const item = new vscode.InlineCompletionItem(insert, range, {
      title: 'Leapfrog: accepted',
      command: ACCEPTED_COMMAND,
      arguments: [doc.uri.toString(), insert],
    });
    return [item];
  }

  private reportShown(doc: vscode.TextDocument, text: string): void {
    if (text === this.lastShown) return;
    this.lastShown = text;
    void this.sidecar.client
      ?.sendNotification(CompletionShownNotification, { uri: doc.uri.toString(), text })
      .catch(() => undefined);
  }

  /** Called through ACCEPTED_COMMAND when the user takes a whole suggestion (Tab). */
  accepted(uri: string, text: string): void {
    this.cache.clear();
    this.prefetcher.afterAccept(uri);
    void this.sidecar.client
      ?.sendNotification(CompletionAcceptedNotification, { uri, text })
      .catch(() => undefined);
  }

  dispose(): void {
    this.inflight?.cancel();
    this.growthSub.dispose();
    this.prefetcher.dispose();
  }
}

/** The editor in front as a growth watch sees it (none with several cursors). */
function editorPlace(): GrowthPlace | undefined {
  const e = vscode.window.activeTextEditor;
  if (!e || e.selections.length !== 1 || !e.selection.isEmpty) return undefined;
  const at = e.selection.active;
  return {
    uri: e.document.uri.toString(),
    version: e.document.version,
    line: at.line,
    character: at.character,
  };
}

/** Resolves true after `ms`, or false as soon as the token is cancelled. */
function sleep(ms: number, token: vscode.CancellationToken): Promise<boolean> {
  return new Promise((resolve) => {
    if (token.isCancellationRequested) return resolve(false);
    const timer = setTimeout(() => {
      sub.dispose();
      resolve(true);
    }, ms);
    const sub = token.onCancellationRequested(() => {
      clearTimeout(timer);
      sub.dispose();
      resolve(false);
    });
  });
}
