/** @vigil/runner-tcp: runs TCP checks. */
export const TCP_CHECK_TYPE = 'TCP' as const;
