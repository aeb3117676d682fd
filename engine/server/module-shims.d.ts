// tsconfig uses moduleResolution "node" (node10), which ignores package.json "exports"; the
// vscode-languageserver 11 family publishes its entry points only through "exports". These
// ambient declarations point the type checker at the same files "exports" names. TypeScript
// consults them only when normal resolution fails, so they become inert once tsconfig moves
// to moduleResolution "node16" (the proper fix; tsconfig is not ours to change).
declare module 'vscode-jsonrpc' {
  export * from 'vscode-jsonrpc/lib/common/api';
}
declare module 'vscode-jsonrpc/node' {
  export * from 'vscode-jsonrpc/lib/node/main';
}
declare module 'vscode-languageserver-protocol' {
  export * from 'vscode-languageserver-protocol/lib/common/api';
}
declare module 'vscode-languageserver/node' {
  export * from 'vscode-languageserver/lib/node/main';
}
declare module 'vscode-languageserver-protocol/node' {
  export * from 'vscode-languageserver-protocol/lib/node/main';
}
