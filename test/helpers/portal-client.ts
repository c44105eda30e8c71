// The portal as a plain HTTP client sees it: cookies kept, CSRF tokens taken from forms,
// redirects not followed (so a test sees each 302 and 303).

/** A browser's cookie handling, enough for one site: remembers Set-Cookie, sends Cookie, never follows redirects. */
export class Client {
  cookies = new Map<string, string>();
  setCookies: string[] = [];
  constructor(private base: string) {}
  async request(path: string, init: RequestInit & { form?: Record<string, string> } = {}): Promise<{ res: Response; body: string }> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('Cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    let body = init.body;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers.set('Content-Type', 'application/x-www-form-urlencoded');
    }
    const res = await fetch(this.base + path, { ...init, body, headers, redirect: 'manual', method: init.method ?? (init.form ? 'POST' : 'GET') });
    for (const c of res.headers.getSetCookie()) {
      this.setCookies.push(c);
      const [pair] = c.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (/Max-Age=0/.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { res, body: await res.text() };
  }
  /** GETs the page and returns the CSRF token of its first form. */
  async token(path: string): Promise<string> {
    const { body } = await this.request(path);
    const m = /name="_csrf" value="([^"]+)"/.exec(body);
    if (!m) throw new Error(`no CSRF token on ${path}`);
    return m[1]!;
  }
  /** Follows the redirect of an answer (one hop), as a browser would with a GET. */
  async follow(answer: { res: Response }): Promise<{ res: Response; body: string }> {
    const location = answer.res.headers.get('location');
    if (!location) throw new Error(`answer ${answer.res.status} has no Location`);
    return this.request(location.replace(/^https?:\/\/[^/]+/, ''));
  }
  async post(path: string, form: Record<string, string>, from = path, headers: Record<string, string> = {}) {
    return this.request(path, { form: { _csrf: await this.token(from), ...form }, headers });
  }
}
