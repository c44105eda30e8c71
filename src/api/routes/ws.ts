import { ApiError } from '../errors.js';
import type { RouteDef } from '../route.js';
import { WsClientMessage, WsServerMessage } from '../ws/messages.js';

// GET /api/v2/ws/ without an upgrade: the WebSocket itself is served by src/api/ws on
// the 'upgrade' event; here it is documented and plain requests are told to upgrade.
export const wsRoute: RouteDef = {
  method: 'GET',
  path: '/api/v2/ws/',
  operationId: 'webSocket',
  summary: 'WebSocket execution: send run messages, receive output as it is written, then the result.',
  description: [
    'Upgrade to a WebSocket; the key goes in Authorization or, from browsers, in ?key=.',
    'Send {"type":"run","id","code","input","compiler"}; receive {"type":"output","id","attempt","seq","stream","data"} messages while the',
    'program writes (seq counts from 0 within the attempt, no gaps; a later attempt, the run taken over by another runner, voids what came of an earlier one), then {"type":"result","id",...result,"submission_id"}. At most one run per second per connection;',
    'refusals come as {"type":"error","id","code","message"} (codes: bad_request, rate_limited, the 429 codes of run-code-sync',
    'including too_many_running and capacity, codeoutput for any refusal of a run through a widget key, with a message for the page\'s reader).',
    'A widget key works only here, and only from a browser whose Origin is one of the key\'s allowed origins: any other',
    'origin gets {"type":"error","code":"origin_not_allowed"} and the socket is closed (1008). An ordinary API key from a',
    'browser page other than the service\'s own (an Origin header naming another site) is refused with 403 origin_not_allowed:',
    'use a widget key there. Messages follow the body rules of the REST API: nesting at most 16 deep, valid Unicode',
    '(no lone surrogate escapes), at most the body size (else closed with 1009). A key revoked while connected gets',
    '{"type":"error","code":"invalid_key"} and the socket is closed (1008). Open connections are capped per key',
    '(RUNBOX_WS_MAX_PER_KEY) and per client address (RUNBOX_WS_MAX_PER_ADDRESS): one more answers 429',
    'too_many_connections. The server pings every RUNBOX_WS_PING_MS and drops a peer that does not answer, closes a',
    'connection idle for RUNBOX_WS_IDLE_MS (1000), and drops a client that leaves more than RUNBOX_WS_MAX_UNREAD_BYTES',
    'of its output unread. Closing the connection stops its runs. A plain GET answers 426.',
    'Interactive runs: a run message with "interactive": true keeps the program\'s stdin open (a pipe, not a terminal) after its',
    'input; send {"type":"stdin","id","data"} as often as needed and {"type":"stdin","id","eof":true} to close it. Its stdin in',
    'all, input included, is at most the input limit (beyond it: error input_limit, and stdin is closed); the run\'s timeout',
    'counts while it waits. Stdin for no such run, a run that is not interactive, one that ended or whose stdin is closed',
    'is answered with error unknown_run, not_interactive, run_finished or stdin_closed. The messages of both directions are',
    'in x-websocket-messages.',
  ].join(' '),
  auth: 'none',
  responses: { 101: { description: 'Switching to the WebSocket protocol.' } },
  webSocket: { client: WsClientMessage, server: WsServerMessage },
  errors: [401, 403, 405, 426, 429],
  handler: () => async () => {
    throw new ApiError(426, 'upgrade_required', 'this is a WebSocket endpoint; connect with a WebSocket client', { Upgrade: 'websocket' });
  },
};
