"""Where a lesson's page and its cards are in the site: the names generate.py gives them and the
conformance matrix (conformance_matrix.py) links to. An id is <lesson>.<name> (specs/README.md)."""
import re


def page_name(lesson_id: str) -> str:
    """The lesson's page, without .html: lesson_ and the id with every other character as _."""
    return "lesson_" + re.sub(r"[^A-Za-z0-9]", "_", lesson_id)


def claim_anchor(claim_id: str) -> str:
    return "claim-" + re.sub(r"[^A-Za-z0-9-]", "-", claim_id)


def listing_anchor(listing_id: str) -> str:
    return "listing-" + listing_id


def card_href(block_id: str, kind: str) -> str:
    """A claim's (kind "claim") or a listing's card, from any page of the site."""
    anchor = claim_anchor(block_id) if kind == "claim" else listing_anchor(block_id)
    return f"{page_name(block_id.split('.', 1)[0])}.html#{anchor}"
