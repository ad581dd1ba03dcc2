/** Whether `header` (Taskgate-Signature) signs `body` with `secret`, within `toleranceSeconds` of now. */
export function verifyTaskgateSignature(secret: string, header: string | null | undefined, body: string, toleranceSeconds?: number): Promise<boolean>;
