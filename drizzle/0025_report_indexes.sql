-- Speed to lead reads a range of assignments with the columns it needs from the index alone (no look-up per row).
DROP INDEX "lead_routing_assigned_idx";--> statement-breakpoint
CREATE INDEX "lead_routing_assigned_idx" ON "lead_routing" USING btree ("assigned_at","lead_id","rule_id","first_contact_at","speed_due_at");
