export { Engine, type EngineOptions, type EngineServices, type EngineState } from './engine.js';
export { RunPipeline, type PipelineServices } from './run-pipeline.js';
export { slotResultId, type RunSpec, type RunOutcome } from './run-spec.js';
export { AlertDispatcher, alertTitle, toAlertMessage, type DispatcherOptions } from './dispatcher.js';
export { heartbeatRunner } from './heartbeat-runner.js';
export { scrubDeep, scrubSecrets, SCRUBBED } from './scrub.js';
export { ENGINE_METRICS, GAUGE_METRICS, engineInstruments, runOutcomeLabel, type EngineInstruments, type RunOutcomeLabel } from './instruments.js';
export { MinHeap } from './min-heap.js';
export { RetentionJob, type RetentionOptions, type RetentionReport } from './retention-job.js';
