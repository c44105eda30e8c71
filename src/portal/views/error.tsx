import { Layout, type PageContext } from './layout.js';

const TITLES: Record<number, string> = { 400: 'Bad request', 401: 'Log in first', 403: 'Refused', 404: 'Not found', 405: 'Not allowed', 410: 'Expired', 429: 'Too many requests', 500: 'Something went wrong', 503: 'Unavailable' };

export function ErrorPage(p: { page: PageContext; status: number; message: string }) {
  return (
    <Layout title={TITLES[p.status] ?? 'Error'} page={p.page}>
      <p>{p.message}</p>
      <p>
        <a href="/">Back to the dashboard</a>
      </p>
    </Layout>
  );
}
