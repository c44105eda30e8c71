import type { CodeEditor, EditorOptions } from '../editor/main.js';

// The code editor (src/browser/editor) is a separate asset, fetched only when a page
// asks for it: the widget stays small unless its `editor` attribute is set, and the
// playground draws its plain form first. `npm run build` gives the editor's path
// (hashed, so it is cached for good) as __RUNBOX_EDITOR__.

declare const __RUNBOX_EDITOR__: string;

export type { CodeEditor, EditorOptions };

type EditorModule = { createEditor(o: EditorOptions): CodeEditor };

let loading: Promise<EditorModule> | null = null;

/** The editor module from `origin` (the runbox server); rejects when it cannot be fetched. */
export function loadEditor(origin: string): Promise<EditorModule> {
  if (!__RUNBOX_EDITOR__) return Promise.reject(new Error('the editor was not built'));
  loading ??= import(/* @vite-ignore */ new URL(__RUNBOX_EDITOR__, origin).href) as Promise<EditorModule>;
  // A failed fetch may be retried by a later call (the network came back).
  loading.catch(() => (loading = null));
  return loading;
}
