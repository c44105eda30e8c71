import type { Socket } from 'node:net';

// Requests Node's HTTP parser refuses before they reach Koa (a bare LF in a header,
// headers or URL over the size limit, both Content-Length and Transfer-Encoding, a
// body not received within the request timeout) are answered here, on the server's
// 'clientError' hook, with the same {"error":{"code","message"}} body as every other
// error, then the connection is closed: after a parse error the stream cannot be trusted.

interface ParserError extends Error {
  code?: string;
}

const ANSWERS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request line and headers are larger than the server accepts'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large', 'chunk_extensions_too_large', 'the chunk extensions are larger than the server accepts'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'the request was not received in time'],
  HPE_UNEXPECTED_CONTENT_LENGTH: [400, 'Bad Request', 'bad_request', 'a request may not carry both Content-Length and Transfer-Encoding'],
};

/** The raw HTTP answer to a parser error. */
export function clientErrorResponse(err: ParserError): string {
  const [status, reason, code, message] = ANSWERS[err.code ?? ''] ?? [400, 'Bad Request', 'bad_request', `malformed HTTP request (${err.code ?? 'parse error'})`];
  const body = JSON.stringify({ error: { code, message } });
  return (
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

export function onClientError(err: ParserError, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // A reset connection has nobody to answer, and an answer already begun cannot be replaced.
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(clientErrorResponse(err), () => socket.destroy());
}
