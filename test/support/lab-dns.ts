import { Resolver } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { lab } from './lab.js';

/**
 * A `lookup` for node:http that resolves names through the lab's cluster DNS, so that the test process can
 * reach `<pod>.<service>.<namespace>.svc` as a pod would.
 */
export function labLookup(): LookupFunction {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([lab().dnsServer]);
  return (hostname, options, callback) => {
    resolver.resolve4(hostname).then(
      (addresses) => {
        const address = addresses[0];
        if (address === undefined) {
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
        } else if (options.all) {
          callback(null, addresses.map((a) => ({ address: a, family: 4 })));
        } else {
          callback(null, address, 4);
        }
      },
      (err: unknown) => {
        callback(err as NodeJS.ErrnoException, '', 4);
      },
    );
  };
}
