"""Tool use, single task (query then act): find the cheapest in-stock product of a category,
order it, and answer with the order id the shop returns."""

import random

CATEGORIES = {
    "kettle": ["SteelBoil", "QuickHeat", "AquaMax", "Brewline", "TeaTime"],
    "lamp": ["Lumio", "DeskGlow", "Nightowl", "Beamly", "Halo"],
    "backpack": ["TrailPro", "CityPack", "Roamer", "Daypak", "Summit"],
}


class ProductOrderEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        self.category = rng.choice(sorted(CATEGORIES))
        self.quantity = rng.randint(2, 5)
        products = {}
        for category, names in CATEGORIES.items():
            for k, name in enumerate(names):
                sku = f"{category[:3].upper()}-{rng.randint(100, 999)}{k}"
                products[sku] = {"name": name, "category": category,
                                 "price": round(rng.uniform(15, 120), 2),
                                 "stock": rng.choice([0, 0, 1, 3, 6, 10, 25])}
        wanted = [s for s, p in products.items()
                  if p["category"] == self.category and p["stock"] >= self.quantity]
        if not wanted:
            sku = next(s for s, p in products.items() if p["category"] == self.category)
            products[sku]["stock"] = self.quantity + 3
            wanted = [sku]
        self.target = min(wanted, key=lambda s: (products[s]["price"], s))
        self.next_order = 5000 + rng.randint(0, 4000)
        self._state = {"products": products, "orders": {}}
        self._expected_answer = f"ORD-{self.next_order}"
        self._tools = {
            "search_products": {"description": "Products of a category with their SKU and "
                                               "price (stock not shown).",
                                "parameters": {"type": "object", "properties": {
                                    "category": {"type": "string",
                                                 "enum": sorted(CATEGORIES)}},
                                    "required": ["category"]}},
            "get_stock": {"description": "Units in stock for a SKU.",
                          "parameters": {"type": "object", "properties": {
                              "sku": {"type": "string"}}, "required": ["sku"]}},
            "place_order": {"description": "Order a quantity of one SKU; returns the order id.",
                            "parameters": {"type": "object", "properties": {
                                "sku": {"type": "string"},
                                "quantity": {"type": "integer", "minimum": 1}},
                                "required": ["sku", "quantity"]}},
            "cancel_order": {"description": "Cancel an order by id.",
                             "parameters": {"type": "object", "properties": {
                                 "order_id": {"type": "string"}}, "required": ["order_id"]}},
        }
        return (f"Order {self.quantity} units of the cheapest {self.category} that has at least "
                f"{self.quantity} in stock. Reply with the order id as <answer>ORD-...</answer>.",
                {})

    def tool_search_products(self, category):
        rows = [f"{s}: {p['name']} ${p['price']:.2f}"
                for s, p in sorted(self._state["products"].items())
                if p["category"] == category]
        return "\n".join(rows) if rows else f"No products in {category}"

    def tool_get_stock(self, sku):
        product = self._state["products"].get(sku)
        return f"Error: unknown SKU {sku}" if product is None else f"{product['stock']} units"

    def tool_place_order(self, sku, quantity):
        product = self._state["products"].get(sku)
        if product is None:
            return f"Error: unknown SKU {sku}"
        if product["stock"] < quantity:
            return f"Error: only {product['stock']} units of {sku} in stock"
        product["stock"] -= quantity
        order_id = f"ORD-{self.next_order + len(self._state['orders'])}"
        self._state["orders"][order_id] = (sku, quantity)
        return f"Order {order_id} placed: {quantity} x {product['name']}"

    def tool_cancel_order(self, order_id):
        order = self._state["orders"].pop(order_id, None)
        if order is None:
            return f"Error: no order {order_id}"
        self._state["products"][order[0]]["stock"] += order[1]
        return f"Order {order_id} cancelled"

    def _check_answer(self, answer):
        orders = self._state["orders"]
        wanted = self._expected_answer
        return (answer.strip().upper() == wanted and orders.get(wanted) == (self.target, self.quantity)
                and len(orders) == 1)

    def solution(self):
        skus = [s for s, p in sorted(self._state["products"].items())
                if p["category"] == self.category]
        steps = [f"search_products(category='{self.category}')"]
        steps += [f"get_stock(sku='{s}')" for s in skus]
        steps += [f"place_order(sku='{self.target}', quantity={self.quantity})",
                  f"<answer>{self._expected_answer}</answer>"]
        return "\n".join(f"{k + 1}. {s}" for k, s in enumerate(steps))
