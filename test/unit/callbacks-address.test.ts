import { expect } from 'chai';
import { ipv6Groups, mappedIPv4, refusedAddress } from '../../src/callbacks/address.js';
import { signatureHeader, verifySignature } from '../../src/callbacks/sign.js';

describe('callback address classifier', () => {
  const refused = [
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '224.0.0.251',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '198.18.0.1',
    '192.0.2.1',
    '::',
    '::1',
    '[::1]',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
    '2001:0:4136:e378::1',
    '2001:db8::1',
  ];
  for (const a of refused) {
    it(`refuses ${a}`, () => {
      expect(refusedAddress(a), a).to.be.a('string');
    });
  }

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e'];
  for (const a of allowed) {
    it(`allows ${a}`, () => {
      expect(refusedAddress(a), a).to.equal(null);
    });
  }

  it('reads every spelling of an IPv4-mapped address', () => {
    expect(mappedIPv4('::ffff:169.254.169.254')).to.equal('169.254.169.254');
    expect(mappedIPv4('::FFFF:A9FE:A9FE')).to.equal('169.254.169.254');
    expect(mappedIPv4('0000:0000:0000:0000:0000:ffff:0a00:0001')).to.equal('10.0.0.1');
    expect(mappedIPv4('2001:db8::ffff:a00:1')).to.equal(null);
    expect(ipv6Groups('1::2')).to.deep.equal([1, 0, 0, 0, 0, 0, 0, 2]);
  });

  it('names the reason, and refuses what is not an address', () => {
    expect(refusedAddress('169.254.169.254')).to.match(/metadata/);
    expect(refusedAddress('localhost')).to.match(/not an IP address/);
  });
});

describe('callback signatures', () => {
  it('verifies its own header and rejects a changed body, secret or timestamp', () => {
    const body = '{"id":"x","output":"hi\\n"}';
    const header = signatureHeader('s3cret', body, 1_700_000_000);
    expect(header).to.match(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature('s3cret', body, header)).to.equal(true);
    expect(verifySignature('s3cret', body + ' ', header)).to.equal(false);
    expect(verifySignature('other', body, header)).to.equal(false);
    expect(verifySignature('s3cret', body, header.replace('t=1700000000', 't=1700000001'))).to.equal(false);
  });
});
