// The delivery log.
export async function logPage(ctx) { ctx.heading('Delivery log'); }
export async function detailPage(ctx) { ctx.heading('Delivery'); }
