import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import { expect, it } from "vitest";
import { describeAllTools } from "../src/mcp/registry.ts";

declare module "vitest" {
  interface TaskMeta {
    /** How many structured results a file's calls received and checked, read by `npm run audit`. */
    outputs?: { validated: number; failed: number };
  }
}

/**
 * Every structured result a test client receives is checked against the
 * output schema its tool publishes in tools/list, by a strict JSON Schema
 * validator that is not the one the SDKs use: Ajv, draft 2020-12, in strict
 * mode (a schema with an unknown keyword, a `required` key without its
 * property or a type it cannot check is itself refused). Objects are closed,
 * so a key the schema does not declare fails as surely as a missing one.
 * The setup file fails the test that received such a result; the audits
 * report how many results they had checked.
 */
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
let schemas: Map<string, object> | undefined;
/** Compiled on a tool's first result (compiling all 84 at once costs half a second a test file). */
const validators = new Map<string, ValidateFunction>();

function validatorOf(name: string): ValidateFunction | undefined {
  schemas ??= new Map(describeAllTools().map((d) => [d.name, d.outputSchema]));
  const schema = schemas.get(name);
  if (!schema) return undefined;
  let v = validators.get(name);
  if (!v) validators.set(name, (v = ajv.compile(schema)));
  return v;
}

export const outputChecks = { validated: 0, failed: 0, failures: [] as string[] };

/** Checks one successful call's structuredContent (an error result has no output schema to meet). */
export function checkOutput(name: string, structured: unknown): void {
  const validate = validatorOf(name);
  if (!validate) return; // an unknown tool: the server refused it, there is no result to check
  outputChecks.validated++;
  if (!validate(structured)) {
    outputChecks.failed++;
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`);
    outputChecks.failures.push(`${name}: ${errors.join("; ")}`);
  }
}

/** The failures since the last call, cleared. */
export function takeOutputFailures(): string[] {
  return outputChecks.failures.splice(0);
}

/** The schema compiled for a tool (for the test that proves the check can fail). */
export function compiledOutput(name: string): ValidateFunction {
  const v = validatorOf(name);
  if (!v) throw new Error(`no tool ${name}`);
  return v;
}

/**
 * The last test of an audit file: every structured result its calls received
 * (setups included) met its tool's published schema, and how many there were.
 */
export function everyResultChecked(what: string): void {
  it(`every structured result ${what} received met its tool's published output schema (Ajv, draft 2020-12, strict)`, ({ task }) => {
    task.meta.outputs = { validated: outputChecks.validated, failed: outputChecks.failed };
    expect(outputChecks.validated).toBeGreaterThan(0);
    expect(outputChecks.failed).toBe(0);
  });
}
