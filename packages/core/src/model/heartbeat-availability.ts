import * as v from 'valibot';
import { DateTimeSchema } from './primitives.js';

export const HeartbeatAvailabilityQuerySchema = v.pipe(
  v.object({
    startTime: v.optional(DateTimeSchema),
    endTime: v.optional(DateTimeSchema),
  }),
  v.forward(
    v.partialCheck(
      [['startTime'], ['endTime']],
      (q) => !q.startTime || !q.endTime || q.endTime > q.startTime,
      'must be after startTime',
    ),
    ['endTime'],
  ),
);
export type HeartbeatAvailabilityQuery = v.InferOutput<typeof HeartbeatAvailabilityQuerySchema>;

export const HeartbeatAvailabilitySchema = v.nullable(
  v.object({
    successRatio: v.object({ previousPeriod: v.number(), currentPeriod: v.number() }),
    totalEntitiesCurrentPeriod: v.number(),
  }),
);
export type HeartbeatAvailability = v.InferOutput<typeof HeartbeatAvailabilitySchema>;
