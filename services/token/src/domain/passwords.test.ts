import { decoyHash, hashPassword, verifyPassword } from './passwords';

describe('password hashing', () => {
  it('stores scrypt parameters, a salt and the hash, never the password', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$16384\$8\$5\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(stored).not.toContain('correct horse');
  });

  it('salts every hash, so equal passwords hash differently', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });

  it('accepts the right password and refuses a wrong one', async () => {
    const stored = await hashPassword('s3cret-passphrase');
    await expect(verifyPassword('s3cret-passphrase', stored)).resolves.toBe(true);
    await expect(verifyPassword('s3cret-passphrasE', stored)).resolves.toBe(false);
  });

  it('verifies with the parameters stored in the hash, so they can change later', async () => {
    const stored = await hashPassword('pass');
    const [, , , , salt, hash] = stored.split('$');
    // Same salt and hash under other parameters must not verify.
    await expect(verifyPassword('pass', `scrypt$1024$8$1$${salt}$${hash}`)).resolves.toBe(false);
  });

  it('refuses malformed stored hashes instead of throwing', async () => {
    for (const stored of ['', 'plain', 'bcrypt$1$2$3$4$5', 'scrypt$x$8$1$c2FsdA==$aGFzaA==', 'scrypt$1024$8$1$$']) {
      await expect(verifyPassword('pass', stored)).resolves.toBe(false);
    }
  });

  it('has a decoy hash that no password is likely to match', async () => {
    await expect(verifyPassword('', await decoyHash())).resolves.toBe(false);
  });
});
