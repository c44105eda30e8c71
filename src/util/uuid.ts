// A UUID as every lookup by id accepts one (submissions, deliveries, problems): checked
// before the database sees it, so a malformed id is a plain "not found", never an error
// of a uuid column's cast.

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
