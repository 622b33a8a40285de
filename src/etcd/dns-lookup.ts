import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';

/**
 * A `lookup` for node:http(s) that asks one DNS server, e.g. the cluster DNS, so that an operator running
 * outside the cluster can reach members by their pod DNS names.
 */
export function resolverLookup(server: string): LookupFunction {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([server]);
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

/** The address `host` resolves to through `lookup` (itself if it is an address already, or with no lookup given). */
export function resolveHost(host: string, lookup: LookupFunction | undefined): Promise<string> {
  if (!lookup || isIP(host) !== 0) return Promise.resolve(host);
  return new Promise((ok, fail) => {
    lookup(host, {}, (err, address) => {
      if (err) fail(err);
      else ok(typeof address === 'string' ? address : (address[0]?.address ?? host));
    });
  });
}
