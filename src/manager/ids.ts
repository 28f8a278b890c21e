/**
 * Job ids: Flux FLUIDs. (Interim: the codecs land with the job manager core.)
 */
export type JobId = bigint & { readonly __brand: "JobId" };
