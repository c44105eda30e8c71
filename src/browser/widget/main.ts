import { RunboxWidget } from './element.js';

// The embeddable widget: `<script type="module" src="{base}/widget/v1.js"></script>`
// then `<runbox-widget key="…" compiler="…">code</runbox-widget>` anywhere on the page.

if (!customElements.get('runbox-widget')) customElements.define('runbox-widget', RunboxWidget);

export { RunboxWidget };
