import type { RejectionReason } from '../../quota/admit.js';

// What a reader of a page with a <runbox-widget> sees when a run is refused. Widget
// keys get these as `codeoutput` errors, shown in the widget's output region (spec
// 6.2), in place of the machine-oriented messages API clients get.

export function widgetRefusalText(reason: RejectionReason | 'connection_rate', retryAfterSeconds: number): string {
  const wait = retryAfterSeconds <= 1 ? 'in a moment' : `in ${retryAfterSeconds} seconds`;
  switch (reason) {
    case 'monthly_limit':
    case 'key_monthly_limit':
      return 'This code runner has reached its monthly limit. It will work again next month.';
    case 'rate_limited':
      return `This code runner has had too many runs in the last minute. Try again ${wait}.`;
    case 'too_many_pending':
    case 'too_many_running':
    case 'capacity':
      return `This code runner is busy with other runs. Try again ${wait}.`;
    case 'connection_rate':
      return 'One run per second, please. Try again in a moment.';
    case 'too_many_tests':
      return 'This run has more tests than this code runner allows.';
    case 'too_much_sandbox_time':
      return 'This run may take longer than this code runner allows.';
  }
}

/** The refusal of a widget key used from a page its owner did not list. */
export function originRefusalText(origin: string | undefined): string {
  const where = origin && origin !== 'null' ? `on ${origin}` : 'here';
  return `This code runner is not allowed ${where}: its widget key does not list this site among its allowed origins.`;
}

/**
 * Key refusals for a browser page, where a widget shows them to the page's author (a
 * refused handshake's body cannot be read by the page, so they come on the socket).
 */
export function keyRefusalText(problem: 'missing_key' | 'invalid_key' | 'api_key', origin: string | undefined): string {
  switch (problem) {
    case 'missing_key':
      return 'This widget has no key. If this is your page, give it a widget key (key="…"), created in the runbox portal.';
    case 'invalid_key':
      return "This widget's key is not valid: it is mistyped or has been revoked. If this is your page, put a current widget key in its key attribute.";
    case 'api_key': {
      const where = origin && origin !== 'null' ? ` (this one is on ${origin})` : '';
      return `This widget uses an API key, which is a secret and does not work in web pages${where}. If this is your page, revoke that key, since it is now public, and use a widget key, which lists the sites it may be used on.`;
    }
  }
}
