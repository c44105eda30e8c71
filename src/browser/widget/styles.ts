// The widget's styles, inside its shadow root: the host page's rules do not reach in,
// and these do not leak out. Every property the controls need is set here, so that
// inherited host styles (font, colour, size) do not change how it looks. Colours follow
// the reader's light or dark preference.

export const STYLES = `
:host {
  all: initial;
  display: block;
  contain: content;
  --bg: #ffffff; --fg: #1f2328; --muted: #57606a; --border: #d0d7de; --panel: #f6f8fa;
  --accent: #0969da; --accent-fg: #ffffff; --err: #cf222e; --focus: #0969da;
  --cm-bg: var(--panel); --cm-fg: var(--fg); --cm-border: var(--border); --cm-gutter-bg: var(--bg); --cm-gutter-fg: var(--muted);
  --cm-focus: var(--focus); --cm-active-gutter: #e8eef6;
  color-scheme: light;
}
@media (prefers-color-scheme: dark) {
  :host {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --panel: #151b23;
    --accent: #4493f8; --accent-fg: #0d1117; --err: #ff7b72; --focus: #4493f8;
    --cm-keyword: #ff7b72; --cm-string: #a5d6ff; --cm-comment: #9198a1; --cm-number: #79c0ff; --cm-function: #d2a8ff;
    --cm-type: #ffa657; --cm-meta: #9198a1; --cm-invalid: #ff7b72; --cm-active-line: rgba(68, 147, 248, 0.08);
    --cm-active-gutter: #262c36; --cm-selection: #264f78; --cm-bracket: #1f4a2c;
    color-scheme: dark;
  }
}
:host([hidden]) { display: none; }
.box {
  box-sizing: border-box; margin: 1em 0; padding: 12px; border: 1px solid var(--border); border-radius: 6px;
  background: var(--bg); color: var(--fg); font: 400 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; text-align: left;
}
*, *::before, *::after { box-sizing: border-box; }
label, .hint, .verdict { display: block; font: inherit; color: var(--muted); font-size: 13px; margin: 0 0 4px; }
.hint { margin: 4px 0 8px; }
textarea, pre, input {
  display: block; width: 100%; margin: 0; padding: 8px; border: 1px solid var(--border); border-radius: 4px;
  background: var(--panel); color: var(--fg); font: 400 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  tab-size: 4; white-space: pre; overflow: auto;
}
textarea { resize: vertical; min-height: 6em; }
textarea.stdin { min-height: 3em; }
textarea[readonly] { cursor: default; }
pre { min-height: 2.5em; max-height: 24em; white-space: pre-wrap; word-break: break-word; }
pre:empty::before { content: attr(data-placeholder); color: var(--muted); }
.stderr, .notice { color: var(--err); }
.bar { display: flex; align-items: center; gap: 12px; margin: 8px 0; }
button {
  all: unset; box-sizing: border-box; display: inline-block; padding: 6px 16px; border-radius: 6px;
  background: var(--accent); color: var(--accent-fg); font: 600 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;
  cursor: pointer; text-align: center;
}
button[aria-disabled=true] { opacity: 0.55; cursor: progress; }
.end { background: none; color: var(--accent); box-shadow: inset 0 0 0 1px var(--accent); white-space: nowrap; }
.line { margin-top: 8px; }
.line .bar { margin: 0; }
input { white-space: normal; }
.stdin { color: var(--accent); font-weight: 600; }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
.status { font-size: 13px; color: var(--muted); }
.verdict { margin: 6px 0 0; color: var(--fg); }
.tabs { display: flex; flex-wrap: wrap; gap: 2px; margin: 0 0 6px; border-bottom: 1px solid var(--border); }
.tab {
  all: unset; box-sizing: border-box; padding: 4px 10px; border: 1px solid transparent; border-bottom: none; border-radius: 4px 4px 0 0;
  color: var(--muted); font: 400 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; cursor: pointer;
}
.tab[aria-selected=true] { color: var(--fg); background: var(--panel); border-color: var(--border); font-weight: 600; }
.files-out:empty { display: none; }
.files { list-style: none; margin: 8px 0 0; padding: 0; display: grid; gap: 8px; }
.file-image { display: block; max-width: 100%; height: auto; border: 1px solid var(--border); border-radius: 4px; background: #fff; }
.file-name { margin: 4px 0; font-size: 13px; color: var(--muted); overflow-wrap: anywhere; }
a { color: var(--accent); }
.diff { margin: 8px 0 0; font-size: 13px; }
.diff p { margin: 4px 0 2px; color: var(--muted); }
.diff pre { min-height: 0; }
.diff-expected { border-left: 3px solid var(--accent); }
.diff-found { border-left: 3px solid var(--err); }
.exercise h3 { margin: 0 0 6px; font-size: 15px; }
.exercise:empty, .tests:empty { display: none; }
.statement { margin: 0 0 6px; overflow-wrap: anywhere; }
.statement p, .statement ul, .statement ol, .statement blockquote { margin: 0 0 6px; }
.statement h4, .statement h5, .statement h6 { margin: 8px 0 4px; font-size: 14px; }
.tests { margin: 8px 0 0; padding-left: 18px; font-size: 13px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;
