// A partial ghost-text answer (its first line, or what there was at the deadline) grows on
// the engine after it is shown; the engine says so (leapfrog/completionGrown) and the editor
// asks again to show the whole suggestion — but only where nothing has happened since: the
// same document at the same version, one cursor at the same place, and soon. Soon, because
// VS Code tells extensions nothing when the user dismisses ghost text (Escape): growth that
// arrives before a person could have reacted to the first line cannot undo a dismissal, later
// growth could, so it waits for the next keystroke (the typed-ahead memory has it). No VS
// Code API here: unit-tested.

export interface GrowthPlace {
  uri: string;
  version: number;
  line: number;
  character: number;
}

/**
 * How long after a partial answer its growth is still shown by itself (ms). About a
 * person's reaction time to something appearing; the bundled model's growth measured
 * ~100–200 ms after its first line (BENCHMARKS.md, session 9).
 */
export const GROWTH_WINDOW_MS = 600;

export class GrowthWatch {
  private awaited: { place: GrowthPlace; at: number } | undefined;

  /** A partial answer was shown at `place` at time `at`: its growth is worth asking for. */
  expect(place: GrowthPlace, at: number): void {
    this.awaited = { place, at };
  }

  /** Anything else was shown or asked for: an older partial answer no longer matters. */
  clear(): void {
    this.awaited = undefined;
  }

  /**
   * The engine says the suggestion at (uri, position) grew, at time `at`; `now` is the
   * editor in front (undefined: none, or several cursors). True when the editor should ask
   * again.
   */
  grown(
    uri: string,
    position: { line: number; character: number },
    now: GrowthPlace | undefined,
    at: number,
  ): boolean {
    const a = this.awaited?.place;
    if (!a || !now || !this.awaited) return false;
    const same =
      a.uri === uri &&
      a.line === position.line &&
      a.character === position.character &&
      now.uri === a.uri &&
      now.version === a.version &&
      now.line === a.line &&
      now.character === a.character;
    if (!same) return false;
    const soon = at - this.awaited.at <= GROWTH_WINDOW_MS;
    this.awaited = undefined; // asked once (or too late to ask)
    return soon;
  }
}
