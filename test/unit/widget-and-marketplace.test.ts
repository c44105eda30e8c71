import { expect } from 'chai';
import { originAllowed } from '../../src/accounts/keys.js';
import { marketplaceFromConfig, validSubscriber } from '../../src/accounts/marketplace.js';
import { rateLimitHeaderValues } from '../../src/api/middleware/rate-limit-headers.js';
import { msUntilWindowFrees, RATE_WINDOW_MS } from '../../src/limits.js';
import { keyRefusalText, originRefusalText, widgetRefusalText } from '../../src/api/ws/widget-text.js';
import { REJECTION_REASONS } from '../../src/quota/admit.js';

// The rules behind widget keys, marketplace calls and the rate-limit headers, alone.

describe('widget origins and messages', () => {
  const allowed = ['https://blog.example', 'http://localhost:3000'];

  it('accepts exactly the listed origins, compared as origins', () => {
    expect(originAllowed(allowed, 'https://blog.example')).to.equal(true);
    expect(originAllowed(allowed, 'HTTPS://Blog.Example:443')).to.equal(true);
    expect(originAllowed(allowed, 'http://localhost:3000')).to.equal(true);
    expect(originAllowed(allowed, 'http://blog.example')).to.equal(false);
    expect(originAllowed(allowed, 'https://blog.example.evil.example')).to.equal(false);
    expect(originAllowed(allowed, 'http://localhost:3001')).to.equal(false);
    expect(originAllowed(allowed, 'null')).to.equal(false);
    expect(originAllowed(allowed, undefined)).to.equal(false);
    expect(originAllowed(allowed, 'not a url')).to.equal(false);
    expect(originAllowed([], 'https://blog.example')).to.equal(false);
  });

  it('has words for the reader for every refusal, never a status or a code', () => {
    for (const reason of REJECTION_REASONS) {
      const text = widgetRefusalText(reason, 12);
      expect(text, reason).to.match(/^[A-Z].*\.$/);
      expect(text, reason).to.not.match(/\d{3}|_/);
    }
    expect(widgetRefusalText('key_monthly_limit', 100)).to.match(/^This code runner has reached its monthly limit/);
    expect(widgetRefusalText('rate_limited', 12)).to.include('in 12 seconds');
    expect(originRefusalText('https://x.example')).to.include('not allowed on https://x.example');
    expect(originRefusalText(undefined)).to.include('not allowed here');
  });

  it("says what a page's author should do about the key, in sentences without codes", () => {
    for (const problem of ['missing_key', 'invalid_key', 'api_key'] as const) {
      const text = keyRefusalText(problem, 'https://x.example');
      expect(text, problem).to.match(/^This widget('s)? .*\.$/);
      expect(text, problem).to.not.match(/_/);
    }
    expect(keyRefusalText('invalid_key', undefined)).to.include("This widget's key is not valid");
    expect(keyRefusalText('api_key', 'https://x.example')).to.include('on https://x.example').and.to.include('use a widget key');
    expect(keyRefusalText('api_key', 'null')).to.not.include('null');
  });
});

describe('marketplace configuration', () => {
  it('means nothing without a secret', () => {
    expect(marketplaceFromConfig({ RUNBOX_MARKETPLACE_PROXY_SECRET: '', RUNBOX_MARKETPLACE_PLANS: 'PRO:pro' })).to.equal(null);
  });

  it('matches the secret exactly and maps subscriptions to plans (unknown: free)', () => {
    const m = marketplaceFromConfig({ RUNBOX_MARKETPLACE_PROXY_SECRET: 's3cret', RUNBOX_MARKETPLACE_PLANS: 'BASIC:free,PRO:pro' })!;
    expect(m.secretMatches('s3cret')).to.equal(true);
    for (const wrong of ['', 's3cre', 's3cret ', 'S3CRET', 's3crets']) expect(m.secretMatches(wrong), wrong).to.equal(false);
    expect(m.planFor('PRO')).to.equal('pro');
    expect(m.planFor('pro')).to.equal('pro');
    expect(m.planFor('BASIC')).to.equal('free');
    expect(m.planFor('MEGA')).to.equal('free');
    expect(m.planFor('')).to.equal('free');
  });

  it('takes printable subscriber names of at most 200 characters', () => {
    expect(validSubscriber('alice')).to.equal(true);
    expect(validSubscriber('a b')).to.equal(true);
    expect(validSubscriber('x'.repeat(200))).to.equal(true);
    for (const bad of ['', ' alice', 'alice ', 'x'.repeat(201), 'al\nice', 'é']) expect(validSubscriber(bad), JSON.stringify(bad)).to.equal(false);
  });
});

describe('rate-limit header values', () => {
  const now = new Date('2026-06-01T00:00:30Z');
  const base = { perMinute: 30, lastMinute: 0, oldestInWindow: null, monthlyLimit: 100, used: 0, keyLimit: null, keyUsed: 0 };

  it('an empty minute: everything left, nothing to wait for', () => {
    expect(rateLimitHeaderValues(base, now)).to.deep.equal({
      'X-RateLimit-Limit': '30',
      'X-RateLimit-Remaining': '30',
      'X-RateLimit-Reset': '0',
      'X-RateLimit-Requests-Limit': '100',
      'X-RateLimit-Requests-Remaining': '100',
    });
  });

  it('counts down the minute from its oldest submission, and the month from the tighter of account and key', () => {
    const f = { ...base, lastMinute: 31, oldestInWindow: new Date('2026-06-01T00:00:00.200Z'), used: 90, keyLimit: 50, keyUsed: 45 };
    expect(rateLimitHeaderValues(f, now)).to.deep.equal({
      'X-RateLimit-Limit': '30',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '31',
      'X-RateLimit-Requests-Limit': '50',
      'X-RateLimit-Requests-Remaining': '5',
    });
    // A key limit above what the account has left: the account's figures bind.
    const g = { ...f, keyLimit: 500, keyUsed: 1 };
    expect(rateLimitHeaderValues(g, now)).to.include({ 'X-RateLimit-Requests-Limit': '100', 'X-RateLimit-Requests-Remaining': '10' });
  });

  it('never resets later than a minute from the answer, even when the oldest submission is stamped after `now`', () => {
    // A request that arrived a moment later (maybe on another API host) was admitted first.
    const later = { ...base, lastMinute: 30, oldestInWindow: new Date(now.getTime() + 40) };
    expect(rateLimitHeaderValues(later, now)).to.include({ 'X-RateLimit-Reset': '60' });
    expect(msUntilWindowFrees(now.getTime() + 40, now.getTime())).to.equal(RATE_WINDOW_MS);
    expect(msUntilWindowFrees(now.getTime() - 59_999, now.getTime())).to.equal(1);
    expect(msUntilWindowFrees(now.getTime() - 70_000, now.getTime())).to.equal(0);
  });
});
