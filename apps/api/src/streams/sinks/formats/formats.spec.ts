import { sampleEvents } from '../sink.fixture';
import { cefHeader, cefValue, toCef } from './cef.format';
import { ocsfActivity, toOcsf } from './ocsf.format';

describe('OCSF API Activity', () => {
  it.each([
    ['document.create', 1],
    ['document.created', 1],
    ['document.read', 2],
    ['document.update', 3],
    ['user.profile.updated', 3],
    ['document.delete', 4],
    ['document.deleted', 4],
    ['invoice.approve', 99],
    ['create.invoice', 99],
    ['read', 2],
    ['document.readd', 99],
  ])('maps %s to activity_id %d', (action, id) => {
    expect(ocsfActivity(action)[0]).toBe(id);
  });

  it('maps the fields contract §16 lists', () => {
    const [event] = sampleEvents(1, { action: 'document.updated' });
    const sut = toOcsf(event!);
    expect(sut).toEqual({
      class_uid: 6003,
      category_uid: 6,
      activity_id: 3,
      activity_name: 'Update',
      type_uid: 600303,
      severity_id: 1,
      time: Date.parse(event!.timestamp),
      actor: { user: { name: 'alice@example.com' } },
      api: { operation: 'document.updated' },
      resources: [{ uid: 'invoice:42' }],
      metadata: { uid: event!.id, version: '1.1.0', product: { name: 'audit-trail' } },
      unmapped: {
        context: event!.context,
        audit: { hash: event!.hash, previousHash: event!.previousHash, chain: event!.chain },
      },
    });
  });

  it('leaves resources out for an event without a resource', () => {
    const [event] = sampleEvents(1, { resource: null });
    expect(toOcsf(event!)).not.toHaveProperty('resources');
  });
});

describe('CEF', () => {
  it('escapes backslash and pipe in the header, and drops line breaks there', () => {
    expect(cefHeader('a|b\\c\nd')).toBe('a\\|b\\\\c d');
  });

  it('escapes backslash, equals and line breaks in extension values', () => {
    expect(cefValue('k=v\\x\r\ny\nz\rw')).toBe('k\\=v\\\\x\\r\\ny\\nz\\rw');
  });

  it('writes one line: header, then the extension with standard and labelled keys', () => {
    const [event] = sampleEvents(1, { action: 'a|b', actor: 'eve=evil\nrt=0', context: { q: 'x=1' } });
    const sut = toCef(event!);
    expect(sut).not.toMatch(/[\r\n]/);
    expect(sut.startsWith('CEF:0|audit-trail|audit-trail|1|a\\|b|a\\|b|3|')).toBe(true);
    expect(sut).toContain(
      `rt=${Date.parse(event!.timestamp)} externalId=${event!.id} suser=eve\\=evil\\nrt\\=0 act=a|b`,
    );
    expect(sut).toContain('cs1Label=resource cs1=invoice:42');
    expect(sut).toContain('cn1Label=chainPosition cn1=1');
    expect(sut).toContain('cs6Label=context cs6={"q":"x\\=1"}');
  });
});
