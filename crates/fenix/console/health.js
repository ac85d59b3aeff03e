// Endpoint health chart.
export async function renderHealth() {}
