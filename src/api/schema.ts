/**
 * A small builder of structural OpenAPI v3 schemas whose TypeScript types are inferred from the same
 * expression, so a CRD's schema and the controller's types cannot drift. It emits only what apiextensions/v1
 * accepts in a structural schema (no $ref, no patternProperties, no additionalProperties beside properties).
 */

export interface OpenApiSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  additionalProperties?: OpenApiSchema;
  items?: OpenApiSchema;
  pattern?: string;
  format?: string;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-validations'?: { rule: string; message: string; messageExpression?: string; fieldPath?: string }[];
}

/** A schema carrying the TypeScript type of the values it admits. */
export interface Schema<T> {
  readonly openapi: OpenApiSchema;
  /** Never set: only carries T for Infer<>. */
  readonly type?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

type Common = Pick<OpenApiSchema, 'description' | 'x-kubernetes-validations'>;

const make = <T>(openapi: OpenApiSchema): Schema<T> => ({ openapi });

export const string = (o: Common & Pick<OpenApiSchema, 'pattern' | 'format' | 'maxLength' | 'default'> = {}): Schema<string> =>
  make({ type: 'string', ...o });

export const oneOf = <const V extends string>(values: readonly V[], o: Common & { default?: V } = {}): Schema<V> =>
  make({ type: 'string', enum: [...values], ...o });

export const integer = (o: Common & Pick<OpenApiSchema, 'minimum' | 'maximum' | 'default' | 'format'> = {}): Schema<number> =>
  make({ type: 'integer', ...o });

export const boolean = (o: Common & { default?: boolean } = {}): Schema<boolean> => make({ type: 'boolean', ...o });

export const array = <T>(items: Schema<T>, o: Common & Pick<OpenApiSchema, 'maxItems'> = {}): Schema<T[]> =>
  make({ type: 'array', items: items.openapi, ...o });

/** A map from string keys to strings (labels, annotations, selectors), with what each value must be. */
export const stringMap = (
  o: Common & Pick<OpenApiSchema, 'maxProperties'> & { values?: Pick<OpenApiSchema, 'maxLength' | 'pattern'> } = {},
): Schema<Record<string, string>> => {
  const { values, ...rest } = o;
  return make({ type: 'object', additionalProperties: { type: 'string', ...values }, ...rest });
};

/** A map from string keys to values of one schema. */
export const mapOf = <T>(values: Schema<T>, o: Common & Pick<OpenApiSchema, 'maxProperties'> = {}): Schema<Record<string, T>> =>
  make({ type: 'object', additionalProperties: values.openapi, ...o });

/**
 * A Kubernetes resource quantity ("500m", "1Gi", 2): an integer or a string that CEL's quantity library
 * parses, so that a bad one is refused at admission instead of by the pod it would go into.
 */
export const quantity = (o: Common = {}): Schema<string | number> => make({
  // Bounded, so that the cost CEL estimates for parsing it stays within the API server's budget.
  'x-kubernetes-int-or-string': true, maxLength: 64, ...o,
  'x-kubernetes-validations': [{ rule: 'isQuantity(string(self))', message: 'not a quantity: write it as Kubernetes does, such as 500m, 2, 1Gi or 512Mi' }],
});

/**
 * An embedded Kubernetes type (affinity, resources, a PVC spec…) that the API server already validates where
 * the operator copies it; kept as-is here, typed as T for the controller.
 */
export const embedded = <T>(description: string): Schema<T> =>
  make({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

/**
 * An embedded Kubernetes type kept as-is like `embedded`, but for the fields the CRD must see into (for a rule that
 * compares them with their old value): those are declared, the rest preserved.
 */
export const embeddedWith = <T>(description: string, properties: Record<string, OpenApiSchema>): Schema<T> =>
  make({ type: 'object', description, properties, 'x-kubernetes-preserve-unknown-fields': true });

type Props = Record<string, Schema<unknown>>;
type Optional<P extends Props, R extends keyof P> = { [K in Exclude<keyof P, R>]?: Infer<P[K]> };
type Required_<P extends Props, R extends keyof P> = { [K in R]: Infer<P[K]> };
type Flatten<T> = { [K in keyof T]: T[K] };

export const object = <P extends Props, R extends keyof P & string = never>(
  properties: P,
  o: Common & { required?: readonly R[] } = {},
): Schema<Flatten<Required_<P, R> & Optional<P, R>>> => {
  const { required, ...rest } = o;
  return make({
    type: 'object',
    properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v.openapi])),
    ...(required && required.length > 0 ? { required: [...required] } : {}),
    ...rest,
  });
};
