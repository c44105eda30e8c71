import type { DocEntry } from '../docs.js';
import { Layout, type PageContext } from './layout.js';

// A page of the documentation: the list of documents, then the document (HTML that
// `npm run build` rendered from the project's own Markdown).

export function DocPage(p: { page: PageContext; entries: DocEntry[]; current: DocEntry; html: string }) {
  return (
    <Layout title={p.current.title} page={p.page}>
      <nav class="doc-nav" aria-label="Documents">
        <ul>
          {p.entries.map((e) => (
            <li>
              <a href={`/docs/${e.name}`} aria-current={e.name === p.current.name ? 'page' : undefined}>
                {e.name === '' ? 'Overview' : e.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <article class="doc" dangerouslySetInnerHTML={{ __html: p.html }} />
    </Layout>
  );
}
