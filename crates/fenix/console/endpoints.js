// Endpoints: the list with state and health, create, and one endpoint's page.
export async function listPage(ctx) { ctx.heading('Endpoints'); }
export async function detailPage(ctx) { ctx.heading('Endpoint'); }
