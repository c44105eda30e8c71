import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// The acknowledgement benchmark's baseline: a bare node:http server on 127.0.0.1 that
// reads the request body and answers as run-code does (200, text Ok, the same headers),
// with no framework, no authentication and no database. Prints its port like the API.

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = randomUUID();
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Submission-Id': id, Location: `/api/v2/submissions/${id}` });
    res.end('Ok');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ listening: { host: '127.0.0.1', port: (server.address() as AddressInfo).port } }) + '\n');
});
process.once('SIGTERM', () => process.exit(0));
server.keepAliveTimeout = 60_000;
