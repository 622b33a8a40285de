import { allCrds } from '../api/crds.js';
import type { OpenApiSchema } from '../api/schema.js';

interface Row { path: string; type: string; rules: string; description: string }

const typeOf = (s: OpenApiSchema): string => {
  if (s.type === 'array') return `[]${s.items ? typeOf(s.items) : ''}`;
  if (s.type === 'object' && s.additionalProperties) return 'map[string]string';
  if (s['x-kubernetes-preserve-unknown-fields']) return 'object (Kubernetes type)';
  return s.type ?? 'any';
};

/** The bounds and CEL rules the API server enforces on a field, in words. */
function rulesOf(s: OpenApiSchema, required: boolean): string {
  const parts = [
    required ? 'required' : '',
    s.default !== undefined ? `default \`${JSON.stringify(s.default)}\`` : '',
    s.enum ? `one of ${s.enum.map((e) => `\`${e}\``).join(', ')}` : '',
    s.minimum !== undefined || s.maximum !== undefined ? `${s.minimum ?? '…'}–${s.maximum ?? '…'}` : '',
    s.pattern ? `matches \`${s.pattern}\`` : '',
    s.maxLength !== undefined ? `at most ${s.maxLength} characters` : '',
    s.maxItems !== undefined ? `at most ${s.maxItems} items` : '',
    s.maxProperties !== undefined ? `at most ${s.maxProperties} entries` : '',
    s.additionalProperties?.pattern ?? s.additionalProperties?.maxLength ? `each value: ${rulesOf(s.additionalProperties, false)}` : '',
    ...(s['x-kubernetes-validations'] ?? []).map((v) => v.message),
  ];
  return parts.filter((p) => p !== '').join('; ');
}

function rows(s: OpenApiSchema, path: string, required: boolean, out: Row[]): Row[] {
  out.push({ path, type: typeOf(s), rules: rulesOf(s, required), description: s.description ?? '' });
  const object = s.type === 'array' ? s.items : s;
  const prefix = s.type === 'array' ? `${path}[]` : path;
  for (const [name, child] of Object.entries(object?.properties ?? {})) rows(child, `${prefix}.${name}`, object?.required?.includes(name) ?? false, out);
  return out;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** docs/configuration.md: every spec field of the three kinds, as the CRDs' schemas state them. */
export function configurationReference(): string {
  const sections = allCrds().map((crd) => {
    const spec = crd.spec as { names: { kind: string }; versions: { schema: { openAPIV3Schema: OpenApiSchema } }[] };
    const root = spec.versions[0]?.schema.openAPIV3Schema.properties?.spec ?? {};
    const body = rows(root, 'spec', true, []).slice(1).map((r) => `| \`${r.path}\` | ${cell(r.type)} | ${cell(r.rules)} | ${cell(r.description)} |`);
    const objectRules = (root['x-kubernetes-validations'] ?? []).map((v) => `- ${v.message}`);
    return [`## ${spec.names.kind}`, '', '| field | type | rules | meaning |', '|---|---|---|---|', ...body,
      ...(objectRules.length ? ['', 'Rules across fields:', ...objectRules] : [])].join('\n');
  });
  return ['# Configuration reference', '', 'Generated from the CRD schemas (`src/api`) by `npm run generate`; do not edit. The API server enforces',
    'every rule listed here at admission: a resource that breaks one is refused with a message naming the field.', '', sections.join('\n\n'), ''].join('\n');
}
