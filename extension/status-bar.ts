// The status-bar item: engine state (starting / ready / busy / error), backend (or the
// endpoint's host when a team's server generates), speed and accepted tokens per target
// pass, and whether completions are snoozed or off here.
import * as vscode from 'vscode';
import type { CompletionGate } from './gate';
import type { EndpointCompletionMode, StatusResult } from '../engine/protocol';
import type { EngineView } from './sidecar';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(private readonly gate: CompletionGate) {
    this.item = vscode.window.createStatusBarItem(
      'leapfrog.status',
      vscode.StatusBarAlignment.Right,
      100,
    );
    this.item.name = 'Leapfrog';
    this.item.command = 'leapfrog.statusMenu';
    this.item.show();
  }

  render(view: EngineView): void {
    const st = view.engine;
    const lang = vscode.window.activeTextEditor?.document.languageId;
    const snoozed = this.gate.snoozedUntil > 0;
    const off = lang !== undefined && !this.gate.allows(lang) && !snoozed;
    let icon: string;
    let text: string;
    switch (view.phase) {
      case 'starting':
        icon = '$(loading~spin)';
        text = 'Leapfrog: starting';
        break;
      case 'busy':
        icon = '$(pulse)';
        text = 'Leapfrog';
        break;
      case 'ready':
        icon = '$(zap)';
        text = 'Leapfrog';
        break;
      case 'error':
        icon = st?.endpoint ? '$(debug-disconnect)' : '$(error)';
        text = `Leapfrog: ${shortError(view.message)}`;
        if (st?.endpoint) text += ` · ${endpointHost(st.endpoint.url)}`;
        break;
      default:
        icon = '$(circle-slash)';
        text = 'Leapfrog: stopped';
    }
    const where = st?.endpoint
      ? `endpoint · ${endpointHost(st.endpoint.url)}`
      : st
        ? gpuLabel(st.backend)
        : undefined;
    if ((view.phase === 'ready' || view.phase === 'busy') && where) text += ` · ${where}`;
    if ((view.phase === 'ready' || view.phase === 'busy') && st && st.lastTokensPerSecond > 0) {
      text += ` ${st.lastTokensPerSecond.toFixed(0)} tok/s`;
      if (st.acceptedPerPass > 1) text += ` · ${st.acceptedPerPass.toFixed(1)}/pass`;
    }
    if (snoozed) {
      icon = '$(debug-pause)';
      text += ' (snoozed)';
    } else if (off) {
      text += ' (off)';
    }
    this.item.text = `${icon} ${text}`;
    this.item.backgroundColor =
      view.phase === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.tooltip = tooltip(view, snoozed ? this.gate.snoozedUntil : 0);
    this.item.accessibilityInformation = {
      label: `Leapfrog ${view.phase}: ${view.message ?? ''}`.trim(),
    };
  }

  dispose(): void {
    this.item.dispose();
  }
}

function shortError(message: string | undefined): string {
  if (!message) return 'error';
  if (/^endpoint .* is down/.test(message)) return 'endpoint down';
  // The platform has no engine build (extension/engine-availability.ts), or it fails to load.
  const noEngine = /no engine build for (?:[^(]*\()?([a-z0-9]+-[a-z0-9]+)/.exec(message);
  if (noEngine) return `no engine for ${noEngine[1]}`;
  if (/^native addon failed to load/.test(message)) return 'engine failed to load';
  if (/addon|not built/i.test(message)) return 'engine not built';
  if (/model.*(not found|missing)|(not found|missing).*model/i.test(message))
    return 'model not found';
  if (/no model/i.test(message)) return 'no model';
  if (/stopped|crash/i.test(message)) return 'engine stopped';
  return 'error';
}

function tooltip(view: EngineView, snoozedUntil: number): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`**Leapfrog** — ${view.phase}\n\n`);
  if (view.message) md.appendText(`${view.message}\n\n`);
  const st = view.engine;
  if (st?.endpoint) {
    const e = st.endpoint;
    md.appendMarkdown(`| | |\n|---|---|\n`);
    md.appendMarkdown(`| endpoint | ${esc(e.url)} |\n`);
    md.appendMarkdown(`| state | ${esc(e.state)}${e.message ? ` — ${esc(e.message)}` : ''} |\n`);
    md.appendMarkdown(`| server | ${esc(e.kind ?? '—')} |\n`);
    md.appendMarkdown(`| model | ${esc(e.model ?? '—')} |\n`);
    md.appendMarkdown(`| completions by | ${esc(completionMode(e.completion))} |\n`);
    md.appendMarkdown(`| speed | ${st.lastTokensPerSecond.toFixed(1)} tokens/s |\n`);
    md.appendMarkdown(`| shown / accepted | ${st.counters.shown} / ${st.counters.accepted} |\n`);
  } else if (st) {
    md.appendMarkdown(`| | |\n|---|---|\n`);
    md.appendMarkdown(`| backend | ${esc(st.backend)} |\n`);
    md.appendMarkdown(`| model | ${esc(st.model ?? '—')} |\n`);
    md.appendMarkdown(`| draft | ${esc(st.draft ?? '—')} |\n`);
    md.appendMarkdown(`| speculation | ${speculation(st)} |\n`);
    md.appendMarkdown(`| speed | ${st.lastTokensPerSecond.toFixed(1)} tokens/s |\n`);
    md.appendMarkdown(`| accepted per pass | ${st.acceptedPerPass.toFixed(2)} |\n`);
    md.appendMarkdown(`| shown / accepted | ${st.counters.shown} / ${st.counters.accepted} |\n`);
  }
  if (snoozedUntil)
    md.appendMarkdown(`\nSnoozed until ${new Date(snoozedUntil).toLocaleTimeString()}\n`);
  md.appendMarkdown('\nClick for options.');
  return md;
}

function speculation(st: StatusResult): string {
  const s = st.speculation;
  const setting = s.mode === 'off' ? 'off' : `${s.mode}, budget ${s.budget}`;
  return `${setting} (${s.accepted} of ${s.drafted} drafted tokens accepted)`;
}

function esc(s: string): string {
  return s.replace(/[|\\`*_[\]<>]/g, (c) => `\\${c}`);
}

/** `gpu-box:8080` of `http://gpu-box:8080`: what the status bar names. */
export function endpointHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function completionMode(mode: EndpointCompletionMode | undefined): string {
  if (mode === 'infill') return '/infill (prefix, suffix, open files)';
  if (mode === 'suffix') return '/v1/completions with suffix';
  if (mode === 'prefix') return '/v1/completions, prefix only';
  return '—';
}

/** `cuda · NVIDIA H200` for a GPU backend (`cuda:NVIDIA H200`); none for the CPU, the default. */
export function gpuLabel(backend: string | undefined): string | undefined {
  const m = /^(cuda|metal):(.+)$/.exec(backend ?? '');
  return m ? `${m[1]} · ${m[2]}` : undefined;
}
