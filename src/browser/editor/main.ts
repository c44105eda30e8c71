import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, HighlightStyle, indentOnInput, indentUnit, LanguageDescription, syntaxHighlighting } from '@codemirror/language';
import { languages } from '@codemirror/language-data';
import { Compartment, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';

// The code editor of the playground and of the widget (its `editor` attribute):
// CodeMirror 6 with line numbers, highlighting for the file's language (by its name's
// extension, from @codemirror/language-data, each language a chunk fetched when first
// needed), undo, bracket matching, and Tab indenting. Tab never traps the keyboard:
// CodeMirror's own convention, Escape then Tab, moves the focus on (and Ctrl+M, or
// Shift+Alt+M on macOS, turns Tab-moves-focus on for good). Ctrl/Cmd+Enter runs.
//
// Each editor draws itself in a shadow root of its own: CodeMirror then styles it with a
// constructed style sheet (adoptedStyleSheets) instead of a <style> element, which a
// strict Content-Security-Policy (style-src 'self', the portal's, many host pages')
// would block. Colours come from CSS custom properties, which reach into shadow roots,
// so the page (or the widget, following the reader's dark preference) sets them.

/** Each compiler id's source file name, from the catalogue when the editor was built (its extension says the language). */
declare const __RUNBOX_SOURCES__: Record<string, string>;

export interface EditorOptions {
  doc: string;
  /** The file's name: its extension picks the highlighting. */
  filename: string;
  /** Code written under the compiler's own file name (filename ''): the compiler id. */
  compiler?: string;
  /** The accessible name of the editing area ("Code of main.py"). */
  label: string;
  /** Said to screen readers with the label (how keys work). */
  hint?: string;
  readOnly?: boolean;
  onChange?(text: string): void;
  onRun?(): void;
}

export interface CodeEditor {
  /** The element to put in the page (the editor's shadow host). */
  readonly element: HTMLElement;
  getValue(): string;
  setValue(text: string): void;
  setFilename(name: string): void;
  setLabel(label: string): void;
  focus(): void;
  destroy(): void;
}

// Token colours with enough contrast on the editor's background in light and dark
// (the page or widget overrides the custom properties for dark).
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword, t.definitionKeyword], color: 'var(--cm-keyword, #a0111f)' },
  { tag: [t.string, t.special(t.string), t.regexp, t.character], color: 'var(--cm-string, #0a3069)' },
  { tag: [t.comment, t.lineComment, t.blockComment, t.docComment], color: 'var(--cm-comment, #57606a)', fontStyle: 'italic' },
  { tag: [t.number, t.bool, t.null, t.atom, t.literal], color: 'var(--cm-number, #0550ae)' },
  { tag: [t.function(t.variableName), t.function(t.propertyName), t.definition(t.function(t.variableName))], color: 'var(--cm-function, #6639ba)' },
  { tag: [t.typeName, t.className, t.namespace, t.standard(t.typeName)], color: 'var(--cm-type, #7d3700)' },
  { tag: [t.meta, t.processingInstruction, t.annotation], color: 'var(--cm-meta, #57606a)' },
  { tag: t.invalid, color: 'var(--cm-invalid, #a0111f)' },
]);

const theme = EditorView.theme({
  '&': {
    color: 'var(--cm-fg, #1f2328)',
    backgroundColor: 'var(--cm-bg, #ffffff)',
    border: '1px solid var(--cm-border, #9aa3b5)',
    borderRadius: '6px',
    fontSize: 'var(--cm-font-size, 13px)',
  },
  '&.cm-focused': { outline: '3px solid var(--cm-focus, #a5b4fc)', outlineOffset: '1px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', lineHeight: '1.45', minHeight: 'var(--cm-min-height, 8em)', maxHeight: 'var(--cm-max-height, 32em)', overflow: 'auto' },
  '.cm-content': { caretColor: 'var(--cm-fg, #1f2328)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--cm-fg, #1f2328)' },
  '.cm-gutters': { backgroundColor: 'var(--cm-gutter-bg, #f6f8fa)', color: 'var(--cm-gutter-fg, #57606a)', borderRight: '1px solid var(--cm-border, #d0d7de)', borderRadius: '6px 0 0 6px' },
  '.cm-activeLine': { backgroundColor: 'var(--cm-active-line, rgba(9, 105, 218, 0.06))' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--cm-active-gutter, #e8eef6)', color: 'var(--cm-fg, #1f2328)' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--cm-selection, #b6d6fb)' },
  '&.cm-focused .cm-matchingBracket': { backgroundColor: 'var(--cm-bracket, #cfe8d3)', outline: 'none' },
});

let editors = 0;

export function createEditor(options: EditorOptions): CodeEditor {
  const host = document.createElement('div');
  host.className = 'code-editor';
  const root = host.attachShadow({ mode: 'open' });
  const hintId = `cm-hint-${++editors}`;
  const hint = document.createElement('p');
  hint.id = hintId;
  // Said with the label, not shown: the page shows its own hint beside the editor.
  hint.hidden = true;
  hint.textContent = options.hint ?? '';
  const language = new Compartment();
  const label = new Compartment();
  const attributes = (text: string) =>
    EditorView.contentAttributes.of({ 'aria-label': text, ...(options.hint ? { 'aria-describedby': hintId } : {}), autocapitalize: 'off', autocorrect: 'off', spellcheck: 'false' });
  const view = new EditorView({
    root,
    parent: root,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(highlight),
        theme,
        language.of([]),
        label.of(attributes(options.label)),
        EditorState.tabSize.of(4),
        // Four spaces a level, as the widget's plain code box indents.
        indentUnit.of('    '),
        EditorState.readOnly.of(options.readOnly === true),
        // Before the default keymap, whose Mod-Enter inserts a blank line.
        keymap.of([{ key: 'Mod-Enter', run: () => (options.onRun?.(), true) }, ...defaultKeymap, ...historyKeymap, ...(options.readOnly ? [] : [indentWithTab])]),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) options.onChange?.(u.state.doc.toString());
        }),
      ],
    }),
  });
  root.append(hint);

  let wanted = '';
  const setFilename = (name: string) => {
    wanted = name;
    const description = LanguageDescription.matchFilename(languages, name);
    if (!description) {
      view.dispatch({ effects: language.reconfigure([]) });
      return;
    }
    description.load().then(
      (support) => {
        // Renamed again meanwhile: that name's language wins.
        if (wanted === name) view.dispatch({ effects: language.reconfigure(support) });
      },
      () => {
        // The language's chunk could not be fetched: plain text still edits.
      },
    );
  };
  setFilename(options.filename || __RUNBOX_SOURCES__[options.compiler ?? ''] || '');

  return {
    element: host,
    getValue: () => view.state.doc.toString(),
    setValue: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    setFilename,
    setLabel: (text) => view.dispatch({ effects: label.reconfigure(attributes(text)) }),
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
