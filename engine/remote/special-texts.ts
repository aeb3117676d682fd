// Special-token texts that must never reach ghost text from a remote model. The local path
// knows its model's own (engine/completion/fim-template.ts); a server's vocabulary is not
// visible from here, so this lists the FIM, file and end-of-text markers of the families
// that servers run (Qwen, StarCoder, CodeLlama, DeepSeek-Coder, Llama 3). Codestral's
// `[SUFFIX]`-style markers are left out: `x[SUFFIX]` is ordinary code.
export const REMOTE_SPECIAL_TEXTS: readonly string[] = [
  '<|endoftext|>',
  '<|fim_prefix|>',
  '<|fim_suffix|>',
  '<|fim_middle|>',
  '<|fim_pad|>',
  '<|file_sep|>',
  '<|repo_name|>',
  '<|im_start|>',
  '<|im_end|>',
  '<fim_prefix>',
  '<fim_suffix>',
  '<fim_middle>',
  '<fim_pad>',
  '<file_sep>',
  '<repo_name>',
  '<｜fim▁begin｜>',
  '<｜fim▁hole｜>',
  '<｜fim▁end｜>',
  '<｜end▁of▁sentence｜>',
  '<|eot_id|>',
  '<|end_of_text|>',
  '<EOT>',
];
