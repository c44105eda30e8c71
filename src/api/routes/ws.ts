import { ApiError } from '../errors.js';
import type { RouteDef } from '../route.js';

// GET /api/v2/ws/ without an upgrade: the WebSocket itself is served by src/api/ws on
// the 'upgrade' event; here it is documented and plain requests are told to upgrade.
export const wsRoute: RouteDef = {
  method: 'GET',
  path: '/api/v2/ws/',
  operationId: 'webSocket',
  summary: 'WebSocket execution: send run messages, receive output as it is written, then the result.',
  description: [
    'Upgrade to a WebSocket; the key goes in Authorization or, from browsers, in ?key=.',
    'Send {"type":"run","id","code","input","compiler"}; receive {"type":"output","id","seq","stream","data"} messages while the',
    'program writes (seq counts from 0 within the run, no gaps), then {"type":"result","id",...result,"submission_id"}. At most one run per second per connection;',
    'refusals come as {"type":"error","id","code","message"} (codes: bad_request, rate_limited, the 429 codes of run-code-sync',
    'including too_many_running and capacity, codeoutput for any refusal of a run through a widget key, with a message for the page\'s reader).',
    'A widget key works only here, and only from a browser whose Origin is one of the key\'s allowed origins: any other',
    'origin gets {"type":"error","code":"origin_not_allowed"} and the socket is closed (1008). Closing the connection',
    'stops its runs. A plain GET answers 426.',
  ].join(' '),
  auth: 'none',
  responses: { 101: { description: 'Switching to the WebSocket protocol.' } },
  errors: [401, 405, 426],
  handler: () => async () => {
    throw new ApiError(426, 'upgrade_required', 'this is a WebSocket endpoint; connect with a WebSocket client', { Upgrade: 'websocket' });
  },
};
