// tsconfig's moduleResolution "node" ignores package.json "exports", through which
// vscode-languageclient 11 publishes `vscode-languageclient/node`. This points the type
// checker at the file "exports" names (esbuild resolves the real one); it is inert once
// tsconfig moves to moduleResolution "node16". (engine/server/module-shims.d.ts does the same.)
declare module 'vscode-languageclient/node' {
  export * from 'vscode-languageclient/lib/node/main';
}
