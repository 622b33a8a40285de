import type { LookupFunction } from 'node:net';
import { resolverLookup } from '../../src/etcd/dns-lookup.js';
import { lab } from './lab.js';

/** Resolves names through the lab's cluster DNS, as a pod would. */
export const labLookup = (): LookupFunction => resolverLookup(lab().dnsServer);
