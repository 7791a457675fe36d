// The declarations of core's root entry (its tsup config builds them from this file, its code from
// src/index.ts): everything src/index.ts exports, and the valibot types core's declarations use.
// Core bundles valibot and inlines these types into its declarations; exported here, they have a
// name a dependent's declarations can import (`import("@vigil/core").ObjectSchema`): a plugin
// that exports a schema it built with core's helpers (modelObject, defineCheckType) gets a
// declaration that names them. The list is valibot's exported types that core's declarations hold;
// test/package-lint.test.ts fails when the built declarations hold one it misses.
export * from '../index.js';
export type {
  ArrayIssue, ArrayPathItem, ArraySchema, BaseIssue, BaseMetadata, BaseSchema, BaseSchemaAsync,
  BaseTransformation, BaseTransformationAsync, BaseValidation, BaseValidationAsync, BooleanIssue,
  BooleanSchema, Brand, BrandName, CheckAction, CheckIssue, Config, ContentInput,
  ContentRequirement, Default, DefaultAsync, DefaultValue, EmailAction, EmailIssue, ErrorMessage,
  ExactOptionalSchema, ExactOptionalSchemaAsync, FailureDataset, Fallback, FallbackAsync,
  GenericPipeAction, GenericSchema, HexadecimalAction, HexadecimalIssue, IncludesAction,
  IncludesIssue, InferInput, InferIssue, InferOutput, IntegerAction, IntegerIssue, IssuePathItem,
  LengthAction, LengthInput, LengthIssue, Literal, LiteralIssue, LiteralSchema, LooseObjectIssue,
  LooseObjectSchema, LooseObjectSchemaAsync, MapPathItem, MaxLengthAction, MaxLengthIssue,
  MaxValueAction, MaxValueIssue, MinLengthAction, MinLengthIssue, MinValueAction, MinValueIssue,
  MultipleOfAction, MultipleOfIssue, NullIssue, NullSchema, NullableSchema, NullishSchema,
  NullishSchemaAsync, NumberIssue, NumberSchema, ObjectEntries, ObjectEntriesAsync, ObjectIssue,
  ObjectPathItem, ObjectSchema, ObjectSchemaAsync, ObjectWithRestIssue, ObjectWithRestSchema,
  ObjectWithRestSchemaAsync, OptionalSchema, OptionalSchemaAsync, OutputDataset, PartialCheckIssue,
  PartialDataset, PicklistIssue, PicklistOptions, PicklistSchema, PipeAction, PipeItem,
  RawCheckAction, RawCheckAddIssue, RawCheckContext, RawCheckIssue, RawCheckIssueInfo,
  ReadonlyAction, RecordIssue, RecordSchema, RegexAction, RegexIssue, SchemaWithFallback,
  SchemaWithFallbackAsync, SchemaWithPipe, SetPathItem, StandardProps, StrictObjectIssue,
  StrictObjectSchema, StrictObjectSchemaAsync, StringIssue, StringSchema, SuccessDataset,
  ToLowerCaseAction, TransformAction, TrimAction, UndefinedIssue, UndefinedSchema, UnionIssue,
  UnionOptions, UnionSchema, UnknownDataset, UnknownPathItem, UnknownSchema, ValueInput,
  VariantIssue, VariantOptions, VariantOptionsAsync, VariantSchema, VariantSchemaAsync,
} from 'valibot';
