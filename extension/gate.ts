// Whether ghost text may be offered right now: the global and per-language switches and the
// snooze. Snooze lives in memory plus globalState, so it also holds across a window reload.
import * as vscode from 'vscode';
import { completionEnabledFor, completionSettings, update } from './config';

const SNOOZE_KEY = 'leapfrog.snoozedUntil';

export class CompletionGate implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  private timer: NodeJS.Timeout | undefined;
  readonly onDidChange = this.changed.event;

  constructor(private readonly state: vscode.Memento) {
    this.armTimer();
  }

  get snoozedUntil(): number {
    const t = this.state.get<number>(SNOOZE_KEY, 0);
    return t > Date.now() ? t : 0;
  }

  allows(languageId: string): boolean {
    return this.snoozedUntil === 0 && completionEnabledFor(languageId);
  }

  async snooze(minutes: number): Promise<void> {
    await this.state.update(SNOOZE_KEY, Date.now() + minutes * 60_000);
    this.armTimer();
    this.changed.fire();
  }

  async resume(): Promise<void> {
    await this.state.update(SNOOZE_KEY, 0);
    this.armTimer();
    this.changed.fire();
  }

  /** Fires a change when the snooze runs out, so the status bar turns back by itself. */
  private armTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    const left = this.snoozedUntil - Date.now();
    if (left > 0) this.timer = setTimeout(() => this.changed.fire(), left + 50);
  }

  async setGlobal(enabled: boolean): Promise<void> {
    await update('completion.enabled', enabled);
  }

  async setLanguage(languageId: string, enabled: boolean): Promise<void> {
    const langs = { ...completionSettings().languages, [languageId]: enabled };
    await update('completion.languages', langs);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.changed.dispose();
  }
}
