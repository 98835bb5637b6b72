-- Lead flow: rules that route a new lead (by how it arrived, its source, its project of interest) to a user or a
-- group (round robin, first to claim, pond); groups and their ordered members; action plans and their steps, the plans
-- running on leads and the follow-ups they made; each lead's routing state (claim deadline, assignment time, first
-- contact, speed-to-lead deadline and stage); users marked away; the pool a lead waits in (leads.pool_id); a
-- department's manager (the escalation of a late lead).
CREATE TABLE "action_plan_steps" (
	"id" uuid PRIMARY KEY NOT NULL,
	"plan_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"offset_amount" integer NOT NULL,
	"offset_unit" text NOT NULL,
	CONSTRAINT "action_plan_steps_offset_check" CHECK ("action_plan_steps"."offset_amount" >= 0),
	CONSTRAINT "action_plan_steps_kind_check" CHECK ("kind" in ('call', 'email', 'meeting', 'site_visit', 'task')),
	CONSTRAINT "action_plan_steps_unit_check" CHECK ("offset_unit" in ('hours', 'days'))
);
--> statement-breakpoint
CREATE TABLE "action_plans" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"active_statuses" text[] DEFAULT '{new,contacted,qualified}'::text[] NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lead_action_plans" (
	"id" uuid PRIMARY KEY NOT NULL,
	"lead_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"stopped_at" timestamp (3) with time zone,
	"stop_reason" text,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lead_flow_away" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"until" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lead_flow_rules" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"position" integer NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"channel" text,
	"source" text,
	"project_id" uuid,
	"assign_user_id" uuid,
	"assign_group_id" uuid,
	"action_plan_id" uuid,
	"speed_limit_minutes" integer,
	"on_speed_limit" text DEFAULT 'remind' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lead_flow_rules_target_check" CHECK (("lead_flow_rules"."assign_user_id" is null) <> ("lead_flow_rules"."assign_group_id" is null)),
	CONSTRAINT "lead_flow_rules_default_check" CHECK (not "lead_flow_rules"."is_default" or ("lead_flow_rules"."channel" is null and "lead_flow_rules"."source" is null and "lead_flow_rules"."project_id" is null)),
	CONSTRAINT "lead_flow_rules_speed_check" CHECK ("lead_flow_rules"."speed_limit_minutes" is null or "lead_flow_rules"."speed_limit_minutes" between 1 and 10080),
	CONSTRAINT "lead_flow_rules_channel_check" CHECK ("channel" is null or "channel" in ('website', 'import', 'api')),
	CONSTRAINT "lead_flow_rules_on_limit_check" CHECK ("on_speed_limit" in ('remind', 'reassign'))
);
--> statement-breakpoint
CREATE TABLE "lead_group_members" (
	"group_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "lead_group_members_pkey" PRIMARY KEY("group_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "lead_groups" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"claim_minutes" integer,
	"fallback_user_id" uuid,
	"fallback_group_id" uuid,
	"next_position" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "lead_groups_kind_check" CHECK ("kind" in ('round_robin', 'first_to_claim', 'pond')),
	CONSTRAINT "lead_groups_claim_minutes_check" CHECK ("lead_groups"."claim_minutes" is null or "lead_groups"."claim_minutes" between 1 and 30),
	CONSTRAINT "lead_groups_fallback_check" CHECK ("lead_groups"."fallback_user_id" is null or "lead_groups"."fallback_group_id" is null)
);
--> statement-breakpoint
CREATE TABLE "lead_routing" (
	"lead_id" uuid PRIMARY KEY NOT NULL,
	"rule_id" uuid,
	"channel" text NOT NULL,
	"claim_deadline" timestamp (3) with time zone,
	"assigned_at" timestamp (3) with time zone,
	"first_contact_at" timestamp (3) with time zone,
	"speed_due_at" timestamp (3) with time zone,
	"speed_stage" smallint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_tasks" (
	"task_id" uuid PRIMARY KEY NOT NULL,
	"lead_plan_id" uuid NOT NULL,
	"step_id" uuid
);
--> statement-breakpoint
ALTER TABLE "departments" ADD COLUMN "manager_id" uuid;--> statement-breakpoint
ALTER TABLE "leads" ADD COLUMN "pool_id" uuid;--> statement-breakpoint
ALTER TABLE "action_plan_steps" ADD CONSTRAINT "action_plan_steps_plan_id_action_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."action_plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_action_plans" ADD CONSTRAINT "lead_action_plans_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_action_plans" ADD CONSTRAINT "lead_action_plans_plan_id_action_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."action_plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_flow_away" ADD CONSTRAINT "lead_flow_away_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_flow_rules" ADD CONSTRAINT "lead_flow_rules_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_flow_rules" ADD CONSTRAINT "lead_flow_rules_assign_user_id_users_id_fk" FOREIGN KEY ("assign_user_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_flow_rules" ADD CONSTRAINT "lead_flow_rules_assign_group_id_lead_groups_id_fk" FOREIGN KEY ("assign_group_id") REFERENCES "public"."lead_groups"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_flow_rules" ADD CONSTRAINT "lead_flow_rules_action_plan_id_action_plans_id_fk" FOREIGN KEY ("action_plan_id") REFERENCES "public"."action_plans"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_group_members" ADD CONSTRAINT "lead_group_members_group_id_lead_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."lead_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_group_members" ADD CONSTRAINT "lead_group_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_groups" ADD CONSTRAINT "lead_groups_fallback_user_id_users_id_fk" FOREIGN KEY ("fallback_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_groups" ADD CONSTRAINT "lead_groups_fallback_group_id_lead_groups_id_fk" FOREIGN KEY ("fallback_group_id") REFERENCES "public"."lead_groups"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_routing" ADD CONSTRAINT "lead_routing_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lead_routing" ADD CONSTRAINT "lead_routing_rule_id_lead_flow_rules_id_fk" FOREIGN KEY ("rule_id") REFERENCES "public"."lead_flow_rules"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_tasks" ADD CONSTRAINT "plan_tasks_task_id_crm_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."crm_tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_tasks" ADD CONSTRAINT "plan_tasks_lead_plan_id_lead_action_plans_id_fk" FOREIGN KEY ("lead_plan_id") REFERENCES "public"."lead_action_plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_tasks" ADD CONSTRAINT "plan_tasks_step_id_action_plan_steps_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."action_plan_steps"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "action_plan_steps_position_key" ON "action_plan_steps" USING btree ("plan_id","position");--> statement-breakpoint
CREATE UNIQUE INDEX "action_plans_name_key" ON "action_plans" USING btree (lower("name"));--> statement-breakpoint
CREATE INDEX "action_plans_created_idx" ON "action_plans" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "lead_action_plans_lead_idx" ON "lead_action_plans" USING btree ("lead_id","created_at");--> statement-breakpoint
CREATE INDEX "lead_action_plans_running_idx" ON "lead_action_plans" USING btree ("plan_id") WHERE "lead_action_plans"."stopped_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "lead_flow_rules_position_key" ON "lead_flow_rules" USING btree ("position");--> statement-breakpoint
CREATE UNIQUE INDEX "lead_flow_rules_default_key" ON "lead_flow_rules" USING btree ("is_default") WHERE "lead_flow_rules"."is_default";--> statement-breakpoint
CREATE INDEX "lead_flow_rules_created_idx" ON "lead_flow_rules" USING btree ("created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "lead_group_members_position_key" ON "lead_group_members" USING btree ("group_id","position");--> statement-breakpoint
CREATE INDEX "lead_group_members_user_idx" ON "lead_group_members" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "lead_groups_name_key" ON "lead_groups" USING btree (lower("name"));--> statement-breakpoint
CREATE INDEX "lead_groups_created_idx" ON "lead_groups" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "lead_routing_claim_idx" ON "lead_routing" USING btree ("claim_deadline") WHERE "lead_routing"."claim_deadline" is not null;--> statement-breakpoint
CREATE INDEX "lead_routing_speed_idx" ON "lead_routing" USING btree ("speed_due_at") WHERE "lead_routing"."first_contact_at" is null and "lead_routing"."speed_due_at" is not null;--> statement-breakpoint
CREATE INDEX "lead_routing_assigned_idx" ON "lead_routing" USING btree ("assigned_at");--> statement-breakpoint
CREATE INDEX "plan_tasks_lead_plan_idx" ON "plan_tasks" USING btree ("lead_plan_id");--> statement-breakpoint
CREATE INDEX "leads_pool_idx" ON "leads" USING btree ("pool_id","created_at","id") WHERE "leads"."pool_id" is not null;
--> statement-breakpoint
-- Written to the change log like every table a list reads.
SELECT pms_log_changes_of('lead_groups', 'lead_groups');
--> statement-breakpoint
SELECT pms_log_changes_of('lead_flow_rules', 'lead_flow_rules');
--> statement-breakpoint
SELECT pms_log_changes_of('action_plans', 'action_plans');
--> statement-breakpoint
-- A user's lead-flow groups are part of their record scope, kept with their principal (src/auth/principals.ts): a change
-- of membership, or of a group's kind, makes every instance read the members' principals again.
CREATE TRIGGER lead_group_members_principal_changed AFTER INSERT OR UPDATE OR DELETE ON lead_group_members FOR EACH ROW EXECUTE FUNCTION pms_principal_notify('user:', 'user_id');
--> statement-breakpoint
CREATE OR REPLACE FUNCTION pms_lead_group_kind_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pms_principals', 'user:' || m.user_id) FROM lead_group_members m WHERE m.group_id = NEW.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER lead_groups_principal_changed AFTER UPDATE OF kind ON lead_groups FOR EACH ROW WHEN (OLD.kind IS DISTINCT FROM NEW.kind) EXECUTE FUNCTION pms_lead_group_kind_changed();
