// The portal's own style sheet, served as a versioned asset (no inline styles: the CSP forbids them).
export const PORTAL_CSS = `
:root{--fg:#1a1f36;--muted:#5b6478;--line:#d8dde6;--bg:#f6f8fa;--accent:#4f46e5;--accent-dark:#3730a3;--bad:#b42318;--ok:#067647;--warn:#93370d;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#fff}
body{margin:0;line-height:1.45}
[hidden]{display:none!important}
a{color:var(--accent-dark)}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:2}
header.top{display:flex;align-items:center;gap:24px;padding:10px 24px;border-bottom:1px solid var(--line);background:var(--bg);flex-wrap:wrap}
header.top .brand{font-weight:700;text-decoration:none;color:var(--fg);font-size:1.1rem}
header.top nav ul{display:flex;gap:16px;list-style:none;margin:0;padding:0;flex-wrap:wrap}
header.top nav a{text-decoration:none;color:var(--fg);padding:4px 2px}
header.top nav a[aria-current=page]{border-bottom:2px solid var(--accent);font-weight:600}
header.top .who{margin-left:auto;display:flex;gap:12px;align-items:center;color:var(--muted)}
main{max-width:1100px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:1.6rem;margin:.4em 0 .6em;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.4em 0 .5em}
table{border-collapse:collapse;width:100%;font-size:.93rem;margin:.5em 0 1em}
th,td{text-align:left;padding:7px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;background:var(--bg)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:var(--bg);border:1px solid var(--line);padding:10px;overflow:auto;white-space:pre-wrap;word-break:break-word}
form.stack{display:grid;gap:14px;max-width:560px}
form.inline{display:inline}
label{font-weight:600;display:block;margin-bottom:4px}
.hint{color:var(--muted);font-size:.88rem;margin:2px 0 0}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=number],select,textarea{font:inherit;padding:7px 9px;border:1px solid #9aa3b5;border-radius:6px;width:100%;box-sizing:border-box;background:#fff;color:var(--fg)}
textarea{min-height:6em}
input:focus,select:focus,textarea:focus,button:focus,a:focus{outline:3px solid #a5b4fc;outline-offset:1px}
fieldset{border:1px solid var(--line);border-radius:6px;padding:8px 12px}
legend{font-weight:600}
fieldset label{display:inline;font-weight:400;margin-right:16px}
button,.button{font:inherit;display:inline-block;padding:7px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--accent-dark)}
button.danger{background:var(--bad);border-color:var(--bad)}
.field-error{color:var(--bad);font-size:.9rem;margin:4px 0 0}
[aria-invalid=true]{border-color:var(--bad)}
.notice{border:1px solid var(--line);border-left:5px solid var(--accent);background:var(--bg);padding:10px 14px;margin:0 0 16px;border-radius:4px}
.notice.warn{border-left-color:#dc6803}.notice.bad{border-left-color:var(--bad)}.notice.ok{border-left-color:var(--ok)}
.secret{display:flex;gap:8px;align-items:center;margin:6px 0}
.secret input{flex:1;font-family:ui-monospace,Menlo,Consolas,monospace}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:0;padding:0}
.figures div{border:1px solid var(--line);border-radius:6px;padding:10px}
.figures dt{color:var(--muted);font-size:.85rem}.figures dd{margin:2px 0 0;font-size:1.3rem;font-weight:600;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
th[scope=row]{background:none;color:var(--fg);font-weight:400}
.chart{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
.chart .bar{fill:var(--accent)}.chart .l80{stroke:#dc6803}.chart .l100{stroke:var(--bad)}.chart text{fill:var(--muted);font-size:11px}
.state-active{color:var(--ok)}.state-revoked{color:var(--bad)}
.actions{display:flex;gap:8px;flex-wrap:wrap;align-items:center}
.pager{display:flex;gap:16px;margin-top:10px}
.muted{color:var(--muted)}
#output{min-height:6em}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
footer.bottom{max-width:1100px;margin:0 auto;padding:14px 24px 40px;border-top:1px solid var(--line);color:var(--muted);font-size:.9rem}
.table-box{overflow-x:auto;max-width:100%;margin:.5em 0 1em}
.table-box table{margin:0}
.table-box:focus{outline:3px solid #a5b4fc}
td.mono{overflow-wrap:break-word}
.toggle{margin:.3em 0}
.block h3{font-size:1rem;margin:1em 0 .3em}
pre.cell{margin:0;padding:4px;max-width:40ch}
details.raw{margin:1em 0}
details.raw summary{cursor:pointer;color:var(--accent-dark)}
p.id{color:var(--muted);overflow-wrap:anywhere;margin-top:-.6em}
code{overflow-wrap:anywhere}
.doc-nav ul{display:flex;flex-wrap:wrap;gap:6px 16px;list-style:none;padding:0;margin:0 0 1em;font-size:.93rem}
.doc-nav a[aria-current=page]{font-weight:600}
.doc{max-width:80ch}
.doc pre{white-space:pre-wrap}
.doc p,.doc li,.doc a{overflow-wrap:anywhere}
.doc img{max-width:100%}
@media (max-width:600px){
header.top{padding:10px 14px;gap:10px}
header.top .who{margin-left:0;flex-wrap:wrap;overflow-wrap:anywhere}
main{padding:14px 14px 40px}
footer.bottom{padding:14px}
.figures{grid-template-columns:repeat(auto-fill,minmax(140px,1fr))}
.figures dd{font-size:1.1rem}
}
.widget-preview{border:2px dashed var(--line);padding:14px;border-radius:6px}
form.playground{max-width:860px}
form.playground [aria-disabled=true]{opacity:.55;cursor:not-allowed}
#output{margin:0}#output .stderr{color:var(--bad)}#output .stdin{color:var(--accent-dark);font-weight:600}
.stdin-line{margin-top:8px}.stdin-line input{flex:1;min-width:0}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.default-action{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);border:0}
form.playground fieldset{display:grid;gap:10px;padding:10px 12px 12px}
form.playground fieldset label{display:block;font-weight:600;margin:0 0 4px}
form.playground fieldset label.check{display:inline-flex;gap:6px;align-items:center;font-weight:400;margin:0}
.file-tabs{display:flex;flex-wrap:wrap;gap:4px;border-bottom:1px solid var(--line)}
.file-tabs .tab{background:#fff;color:var(--fg);border:1px solid var(--line);border-bottom:none;border-radius:6px 6px 0 0;padding:5px 12px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
.file-tabs .tab[aria-selected=true]{background:var(--bg);border-color:#9aa3b5;font-weight:700;box-shadow:inset 0 -3px 0 var(--accent)}
.file{display:grid;gap:6px}
.file-head{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end}
.file-head .file-name{flex:1 1 14em;min-width:0}
textarea.code{min-height:14em}
.code-editor{display:block;min-width:0}
.test{display:grid;gap:6px;border-top:1px solid var(--line);padding-top:8px}
.test-title{font-size:1rem;margin:0}
.test-pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(14em,1fr));gap:10px}
.test .remove,.file .remove{justify-self:start}
ul.files{list-style:none;margin:10px 0 0;padding:0;display:grid;gap:10px}
.file-image{display:block;max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px;background:#fff}
.file-name{margin:4px 0;overflow-wrap:anywhere}
pre.file-text{margin:0}
.judged{margin-top:10px}
.test-group{margin:6px 0 6px 1em;border-left:2px solid var(--muted);padding-left:8px}
.test-group summary{cursor:pointer}
.test-group .group-name{font-weight:600}
.test-group summary .ok{color:var(--ok)}.test-group summary .bad{color:var(--bad)}
td.ok{color:var(--ok);font-weight:600}td.bad{color:var(--bad);font-weight:600}
.diff h3{font-size:1rem;margin:1em 0 .3em}
.diff-pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(14em,1fr));gap:10px}
.dialogue{list-style:none;padding:0;margin:0;display:grid;gap:4px}.dialogue li{display:grid;grid-template-columns:6em 1fr;align-items:start;gap:8px}.dialogue li[data-from=program]{grid-template-columns:1fr 6em}.dialogue li[data-from=program] .who{order:2;text-align:right}.dialogue pre{margin:0}.dialogue .who{font-size:.85em;opacity:.75;padding-top:.4em}
.diff-label{margin:0 0 2px;color:var(--muted);font-size:.88rem}
.diff pre{margin:0}
pre.diff-expected{border-left:4px solid var(--ok)}pre.diff-found{border-left:4px solid var(--bad)}
.problem-upload input[type=file]{font:inherit;max-width:100%}
/* The grading list: filters in a row that wraps; cells that keep their words whole. */
form.filters{display:flex;flex-wrap:wrap;gap:10px 14px;align-items:flex-end;margin:0 0 12px}
form.filters>div{min-width:9em;flex:1 1 9em;max-width:16em}
form.filters .filter-actions{display:flex;gap:12px;align-items:center;flex:0 0 auto;min-width:0}
form.filters .field-error{flex-basis:100%}
input[type=date]{font:inherit;padding:6px 8px;border:1px solid #9aa3b5;border-radius:6px;width:100%;box-sizing:border-box;background:#fff;color:var(--fg)}
.nowrap,td.num,th{white-space:nowrap}
td.mono.nowrap{overflow-wrap:normal}
/* Problems made in the portal: the form's paired fields, the statement, each test's data folded. */
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(12em,1fr));gap:10px}
form.problem-form{max-width:860px}
form.problem-form fieldset{display:grid;gap:10px}
form.problem-form fieldset label.check,form.stack label.check{display:inline-flex;gap:6px;align-items:center;font-weight:400;margin:0}
.statement{max-width:80ch;overflow-wrap:anywhere}
.statement pre{white-space:pre-wrap}
details.test-data,details.test-input{border-top:1px solid var(--line);padding:6px 0}
details.test-data summary,details.test-input summary{cursor:pointer;overflow-wrap:anywhere}
#output .note{color:var(--muted);font-style:italic}
/* Phone width: dates and key prefixes stay on one line in tables; the usage chart's labels stay readable when it scales down. */
td time{white-space:nowrap}
@media (max-width:600px){.chart text{font-size:22px}.table-box td{min-width:4.5em}}
`;
