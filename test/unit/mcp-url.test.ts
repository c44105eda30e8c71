import { expect } from 'chai';
import { UsageError } from '../../src/cli/command.js';
import { mcpUrl } from '../../src/cli/commands/mcp.js';

// runbox-admin mcp --url: the service's base URL or its /mcp, either way the /mcp called.

describe('runbox-admin mcp --url', () => {
  it("the service's URL gets /mcp; a URL already at /mcp stays", () => {
    expect(mcpUrl('https://runbox.example.com').href).to.equal('https://runbox.example.com/mcp');
    expect(mcpUrl('https://runbox.example.com/').href).to.equal('https://runbox.example.com/mcp');
    expect(mcpUrl('http://127.0.0.1:8080/runbox/').href).to.equal('http://127.0.0.1:8080/runbox/mcp');
    expect(mcpUrl('https://runbox.example.com/mcp').href).to.equal('https://runbox.example.com/mcp');
  });

  it('anything but an http or https URL is a usage error', () => {
    expect(() => mcpUrl('runbox.example.com')).to.throw(UsageError, /--url must be the service's URL/);
    expect(() => mcpUrl('file:///etc/passwd')).to.throw(UsageError, /http or https/);
  });
});
