// The official TypeScript MCP SDK client against the real `undercroft serve-mcp` over stdio (issue 18 §3).
//
//   node probe.mjs <undercroft program> <receipt file>    (UNDERCROFT_HOME names an initialised palace)
//
// Lists every tool and judges what a host reads: annotations (title and the three hints), an object input
// schema whose every property is constrained (a type or an enum, numbers bounded, no unknown keys), and an
// output schema. Then calls every tool once against the vault; the SDK client itself validates each result's
// structuredContent against the tool's outputSchema (a mismatch throws inside callTool), and the probe checks it
// again with Ajv. Prints one JSON report on stdout; exits 0 when it could run (the Python test judges it).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const [program, receiptPath] = process.argv.slice(2);
const env = { ...process.env };
const transport = new StdioClientTransport({ command: program, args: ["serve-mcp"], env, stderr: "ignore" });
const client = new Client({ name: "undercroft-ts-probe", version: "0.0.0" });
await client.connect(transport);

const tools = (await client.listTools()).tools;
const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));

function constrained(schema) {
  // Every property says what it takes: a type (or an enum / const / anyOf of typed branches); integers and
  // numbers carry a minimum and a maximum; the object refuses keys it does not declare.
  const problems = [];
  if (schema?.type !== "object") problems.push("not an object schema");
  if (schema?.additionalProperties !== false) problems.push("additionalProperties is not false");
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const branches = property.anyOf ?? [property];
    for (const branch of branches) {
      const typed = branch.type !== undefined || branch.enum !== undefined || branch.const !== undefined;
      if (!typed) problems.push(`${name}: no type`);
      const low = branch.minimum ?? branch.exclusiveMinimum;
      const high = branch.maximum ?? branch.exclusiveMaximum;
      if ((branch.type === "integer" || branch.type === "number") && (low === undefined || high === undefined)) {
        problems.push(`${name}: unbounded ${branch.type}`);
      }
    }
  }
  return problems;
}

const report = { tools: tools.map((tool) => tool.name), annotated: [], objectSchemas: [], constrained: [], unconstrained: {},
  withOutputSchema: [], called: [], validated: [], failures: {}, readOnly: [] };
for (const tool of tools) {
  const hints = tool.annotations ?? {};
  if (hints.title && typeof hints.readOnlyHint === "boolean" && typeof hints.destructiveHint === "boolean"
      && typeof hints.idempotentHint === "boolean") report.annotated.push(tool.name);
  if (hints.readOnlyHint === true) report.readOnly.push(tool.name);
  if (tool.inputSchema?.type === "object") report.objectSchemas.push(tool.name);
  const problems = constrained(tool.inputSchema);
  if (problems.length === 0) report.constrained.push(tool.name); else report.unconstrained[tool.name] = problems;
  if (tool.outputSchema?.type === "object") report.withOutputSchema.push(tool.name);
}

const ajv = new Ajv({ strict: false, allErrors: true });
async function call(name, args) {
  try {
    const result = await client.callTool({ name, arguments: args }); // the SDK validates structuredContent
    report.called.push(name);
    if (result.isError) {
      report.failures[name] = `isError: ${result.content?.map((part) => part.text).join("")}`;
      return result;
    }
    const validate = ajv.compile(byName[name].outputSchema);
    if (validate(result.structuredContent)) report.validated.push(name);
    else report.failures[name] = JSON.stringify(validate.errors);
    return result;
  } catch (error) {
    report.called.push(name);
    report.failures[name] = `threw: ${error.message}`;
    return null;
  }
}

const words = "We chose PostgreSQL for the billing service because of row-level locking.";
const saved = await call("undercroft_save", { content: words, wing: "work", room: "billing", kind: "decision" });
const drawerId = saved?.structuredContent?.id;
const added = await call("undercroft_add_drawer", { wing: "work", room: "notes", source_file: "notes/a.md", content: "Alice and Bob met at Acme." });
await call("undercroft_update_drawer", { drawer_id: added?.structuredContent?.id, content: "Alice and Bob met at Acme again." });
await call("undercroft_search", { query: "which database for billing", limit: 5 });
await call("undercroft_get_drawer", { drawer_id: drawerId });
await call("undercroft_list_drawers", { wing: "work" });
await call("undercroft_wake_up", {});
await call("undercroft_check_duplicate", { content: words });
await call("undercroft_dedup", {});
for (const name of ["undercroft_status", "undercroft_list_wings", "undercroft_get_taxonomy", "undercroft_get_closet_index",
  "undercroft_list_agents", "undercroft_list_hallways", "undercroft_verify", "undercroft_history", "undercroft_list_tunnels",
  "undercroft_kg_stats", "undercroft_kg_timeline", "undercroft_kg_receipts", "undercroft_list_rooms",
  "undercroft_kg_entities", "undercroft_supersessions"]) {
  await call(name, {});
}
await call("undercroft_diary_write", { agent_name: "claude", entry: "Worked on the billing move." });
await call("undercroft_diary_read", { agent_name: "claude" });
const tunnel = await call("undercroft_create_tunnel", { source_wing: "work", target_wing: "life", label: "alice" });
await call("undercroft_follow_tunnels", { wing: "work" });
await call("undercroft_traverse", { start_wing: "work" });
await call("undercroft_delete_tunnel", { tunnel_id: tunnel?.structuredContent?.tunnel?.id });
await call("undercroft_kg_add", { subject: "alice", predicate: "works_at", object: "acme" });
await call("undercroft_kg_query", { entity: "alice" });
await call("undercroft_kg_rel", { predicate: "works_at" });
await call("undercroft_kg_supersede", { subject: "alice", predicate: "works_at", new_object: "initech" });
await call("undercroft_kg_invalidate", { subject: "alice", predicate: "works_at" });
await call("undercroft_lookup_canonical", { key: "billing.database" });
await call("undercroft_check_erasure_receipt", { attestation: readFileSync(receiptPath, "utf-8") });
await call("undercroft_delete_by_source", { source_file: "notes/a.md" });
await call("undercroft_delete_drawer", { drawer_id: drawerId });
await call("undercroft_index_status", { backend: "chroma" }); // no mirror declared: an isError naming the variable

report.sdkVersion = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url))).version;
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
