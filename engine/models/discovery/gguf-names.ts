// Which *.gguf files discovery lists: a model's own file, not the second and later shards of
// a split model (the first shard stands for the whole) nor a multimodal projector (mmproj),
// which is no language model of its own.

const SHARD = /-(\d{5})-of-(\d{5})\.gguf$/i;

export function isListedGguf(fileName: string): boolean {
  if (!/\.gguf$/i.test(fileName)) return false;
  if (/mmproj/i.test(fileName)) return false;
  const shard = SHARD.exec(fileName);
  return !shard || Number(shard[1]) === 1;
}

/** A file name without its .gguf extension, for display. */
export function withoutGgufExtension(name: string): string {
  return name.replace(/\.gguf$/i, '');
}
