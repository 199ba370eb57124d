"""The knowledge layer's vocabulary: entity types, relationship types (and what each is for), modalities."""

from __future__ import annotations

ENTITY_TYPES: dict[str, str] = {
    "Person": "a named human being",
    "Organization": "a company, fund, client, agency, school or other body",
    "Product": "a product, app, plan or service that is sold or used",
    "Project": "a named internal effort, feature or initiative",
    "Concept": "a method, framework, metric or idea with a name",
    "Event": "a dated meeting, launch, round, offsite or incident",
    "Location": "a city, country, office or venue",
    "Document": "a named document, deck, contract or report",
    "Decision": "a choice that was made (or explicitly rejected), stated as a short title",
    "Lesson": "something learned, stated as a short title",
}

# One closed list; each type answers a kind of question a personal/business knowledge base gets.
RELATIONSHIP_TYPES: dict[str, str] = {
    "WORKS_AT": "a person is employed by or contracts for an organization (people, roles)",
    "HAS_ROLE_IN": "a person holds a named role in a project, board or event (people, roles)",
    "FOUNDED": "a person founded an organization or product (origins)",
    "INTRODUCED": "a person introduced one party to another (introductions, who knows whom)",
    "ADVISES": "a person advises an organization or person (people)",
    "INVESTED_IN": "a person or fund invested in an organization, with amount in evidence (funding)",
    "CLIENT_OF": "an organization is a customer of another organization or product (clients)",
    "PARTNER_OF": "two organizations work together as partners (partners)",
    "SUPPLIES": "an organization provides a product or service to another (vendors)",
    "COMPETES_WITH": "two organizations or products compete (competition)",
    "POSITIONED_AGAINST": "a product is positioned against a competitor or alternative (positioning)",
    "BUILT": "a person or organization built a product, feature or document (who made what)",
    "OWNS": "a person or organization owns or is responsible for something (ownership)",
    "USES": "a person, organization or product uses a product, tool or method (tools)",
    "PART_OF": "a product, feature, project or team is part of a larger one (structure)",
    "RENAMED_TO": "an entity was renamed to another name (identity over time)",
    "REPLACED_BY": "a product, tool, price or plan was replaced by another (changes)",
    "DECIDED": "a person or organization made a decision (decisions)",
    "LED_TO": "a decision, event or lesson led to an outcome (consequences)",
    "CAUSED": "an event or problem caused another (causes)",
    "LEARNED_FROM": "a lesson was learned from an event, decision or project (lessons)",
    "EVIDENCED_BY": "a claim, decision or event is backed by a document (receipts and proof)",
    "ATTENDED": "a person attended an event or meeting (timelines)",
    "HELD_AT": "an event took place at a location (places)",
    "LOCATED_IN": "an organization or office is located in a place (places)",
    "HIRED": "an organization or person hired a person (team history)",
    "FUNDED": "money, a round or a grant funded a hire, project or product (money trail)",
    "MENTIONS_METRIC": "an organization or product is measured by a named metric (metrics)",
    "CONFLICTS_WITH": "two statements or plans are at odds (contradictions)",
    "RELATED_TO": "fallback: related in a way none of the types above states",
}

MODALITIES: dict[str, str] = {
    "fact": "stated as having happened or being true, by the author",
    "reported": "someone else's statement, relayed by the author",
    "plan": "intended or scheduled, not (yet) done",
    "opinion": "a judgement, belief or preference",
    "hypothetical": "a what-if or conditional",
    "ai_suggestion": "suggested by an AI assistant in a saved chat, not adopted as stated",
}

# Names that share one namespace during resolution: the same name in two of them is one candidate set.
SHARED_NAMESPACE = ("Organization", "Product", "Project", "Concept")
