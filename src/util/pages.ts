// One page of a list, as every list of the admin CLI, the admin API and the portal
// gives it: newest first, at most `limit` items after a given one (keyset paging: a page
// stays right while rows are added above it), and how many more there are after it.

export interface PageRequest {
  /** Items on the page; null: all of them. */
  limit: number | null;
  /** The key of the last item of the previous page (its id); absent: from the newest. */
  after?: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** Items after this page (older ones). */
  more: number;
  /** True when `more` is a lower bound (lists whose rows are counted only up to a cap). */
  moreAtLeast?: boolean;
  /** The `after` of the next page; null on the last one. */
  next: string | null;
}

/** A page from its items (fetched newest first, at most limit) and a count of those after the last. */
export async function pageOf<T>(
  items: T[],
  req: PageRequest,
  keyOf: (item: T) => string,
  countAfter: (lastKey: string) => Promise<number>,
): Promise<Page<T>> {
  const last = items.at(-1);
  const full = req.limit !== null && items.length >= req.limit;
  const more = last !== undefined && full ? await countAfter(keyOf(last)) : 0;
  return { items, more, next: more > 0 ? keyOf(last!) : null };
}

/** "29 more (older)", with a cap's "at least". */
export function moreText(page: Pick<Page<unknown>, 'more' | 'moreAtLeast'>, noun: string): string {
  return `${page.moreAtLeast ? 'more than ' : ''}${page.more.toLocaleString('en-US')} more ${noun}`;
}
