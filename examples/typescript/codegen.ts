// graphql-codegen configuration: TypeScript types for feedd's schema and for
// the operations in src/operations, as typed document nodes. The schema is
// the repository's source of truth, read from disk (no server needed).
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "../../schema.graphqls",
  documents: ["src/operations/*.graphql"],
  overwrite: true,
  generates: {
    "src/generated/graphql.ts": {
      // typescript-operations emits the schema types the operations use
      // (enums, inputs) itself; the separate `typescript` plugin would
      // declare them a second time.
      plugins: ["typescript-operations", "typed-document-node"],
      config: {
        // DateTime is an RFC 3339 string on the wire; ID is an opaque string.
        scalars: {
          DateTime: { input: "string", output: "string" },
          ID: { input: "string", output: "string" },
        },
        strictScalars: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
