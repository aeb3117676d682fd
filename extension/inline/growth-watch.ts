// A partial ghost-text answer (its first line, or what there was at the deadline) grows on
// the engine after it is shown; the engine says so (leapfrog/completionGrown) and the editor
// asks again to show the whole suggestion — but only where nothing has happened since: the
// same document at the same version, one cursor at the same place. A suggestion accepted,
// typed over or moved away from is left alone. No VS Code API here: unit-tested.

export interface GrowthPlace {
  uri: string;
  version: number;
  line: number;
  character: number;
}

export class GrowthWatch {
  private awaited: GrowthPlace | undefined;

  /** A partial answer was shown at `place`: its growth is worth asking for. */
  expect(place: GrowthPlace): void {
    this.awaited = place;
  }

  /** Anything else was shown or asked for: an older partial answer no longer matters. */
  clear(): void {
    this.awaited = undefined;
  }

  /**
   * The engine says the suggestion at (uri, position) grew; `now` is the editor in front
   * (undefined: none, or several cursors). True when the editor should ask again.
   */
  grown(
    uri: string,
    position: { line: number; character: number },
    now: GrowthPlace | undefined,
  ): boolean {
    const a = this.awaited;
    if (!a || !now) return false;
    const same =
      a.uri === uri &&
      a.line === position.line &&
      a.character === position.character &&
      now.uri === a.uri &&
      now.version === a.version &&
      now.line === a.line &&
      now.character === a.character;
    if (same) this.awaited = undefined; // asked once
    return same;
  }
}
