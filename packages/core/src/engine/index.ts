export { Engine, type EngineServices, type EngineState } from './engine.js';
export { type EngineOptions } from './engine-options.js';
export { RunPipeline, type PipelineServices } from './run-pipeline.js';
export { legacySlotResultId, slotIdDueAt, slotResultId, type RunSpec, type RunOutcome } from './run-spec.js';
export { AlertDispatcher, alertTitle, toAlertMessage, type DispatcherOptions } from './dispatcher.js';
export { heartbeatRunner } from './heartbeat-runner.js';
export { ENGINE_METRICS, GAUGE_METRICS, engineInstruments, runOutcomeLabel, type EngineInstruments, type RunOutcomeLabel } from './instruments.js';
export { MinHeap } from './min-heap.js';
export { RetentionJob, type RetentionOptions, type RetentionReport } from './retention-job.js';
