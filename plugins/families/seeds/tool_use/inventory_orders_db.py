"""Tool use over a database: place an order in an inventory/orders store (SQLite); success is
checked on the final state (the order row exists, stock went down, nothing else changed)."""

import random

SCHEMA = """
CREATE TABLE products (
    sku TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents > 0),
    stock INTEGER NOT NULL CHECK (stock >= 0)
);
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    sku TEXT NOT NULL REFERENCES products(sku),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    total_cents INTEGER NOT NULL
);
"""
NAMES = ["desk lamp", "usb hub", "notebook", "stapler", "monitor arm", "chair mat", "webcam",
         "headset"]
CUSTOMERS = ["Ada Park", "Ben Ruiz", "Chen Wei", "Dana Cole", "Eli Moss"]


class InventoryOrdersEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        names = rng.sample(NAMES, 5)
        products = [(f"SKU-{100 + k}", name, rng.randint(3, 90) * 100 + 99, rng.randint(0, 9))
                    for k, name in enumerate(names)]
        customers = [(k + 1, name) for k, name in enumerate(rng.sample(CUSTOMERS, 3))]
        wanted = rng.choice([p for p in products if p[3] >= 2])
        self._sku, self._item = wanted[0], wanted[1]
        self._quantity = rng.randint(2, wanted[3])
        self._customer_id, self._customer = rng.choice(customers)
        self._stock_before = wanted[3]
        self.create_database(SCHEMA, {"products": products, "customers": customers})
        self._tools = {
            "search_products": {"description": "Products whose name contains a text.",
                                "parameters": {"type": "object", "properties": {
                                    "text": {"type": "string"}}, "required": ["text"]}},
            "find_customer": {"description": "A customer's id by exact name.",
                              "parameters": {"type": "object", "properties": {
                                  "name": {"type": "string"}}, "required": ["name"]}},
            "place_order": {"description": "Order a quantity of a product for a customer; "
                                           "fails when the stock is too low.",
                            "parameters": {"type": "object", "properties": {
                                "customer_id": {"type": "integer"},
                                "sku": {"type": "string"},
                                "quantity": {"type": "integer", "minimum": 1}},
                                "required": ["customer_id", "sku", "quantity"]}},
            "list_orders": {"description": "Orders of a customer.",
                            "parameters": {"type": "object", "properties": {
                                "customer_id": {"type": "integer"}},
                                "required": ["customer_id"]}},
        }
        self._expected_answer = None
        return (f"Please order {self._quantity} x '{self._item}' for {self._customer}. "
                "Reply <answer>done</answer> once the order is placed.", {})

    def tool_search_products(self, text):
        rows = self._db.query("SELECT sku, name, price_cents, stock FROM products "
                              "WHERE name LIKE ? ORDER BY sku", ("%" + text + "%",))
        if not rows:
            return f"No product matches '{text}'."
        return "\n".join(f"{r['sku']}: {r['name']}, {r['price_cents'] / 100:.2f} USD, "
                         f"{r['stock']} in stock" for r in rows)

    def tool_find_customer(self, name):
        row = self._db.query_one("SELECT id FROM customers WHERE name = ?", (name,))
        return f"Error: no customer named '{name}'." if row is None else f"customer_id={row['id']}"

    def tool_place_order(self, customer_id, sku, quantity):
        product = self._db.query_one("SELECT price_cents, stock FROM products WHERE sku = ?",
                                     (sku,))
        if product is None:
            return f"Error: unknown sku {sku}."
        if self._db.scalar("SELECT count(*) FROM customers WHERE id = ?", (customer_id,)) == 0:
            return f"Error: unknown customer_id {customer_id}."
        try:
            with self._db.transaction():
                self._db.execute("UPDATE products SET stock = stock - ? WHERE sku = ?",
                                 (quantity, sku))
                order = self._db.query(
                    "INSERT INTO orders (customer_id, sku, quantity, total_cents) "
                    "VALUES (?, ?, ?, ?) RETURNING id",
                    (customer_id, sku, quantity, quantity * product["price_cents"]))
        except DatabaseError as exc:
            return f"Error: the order was not created ({exc}); {product['stock']} in stock."
        return f"Order {order[0]['id']} placed: {quantity} x {sku}."

    def tool_list_orders(self, customer_id):
        rows = self._db.query("SELECT id, sku, quantity FROM orders WHERE customer_id = ? "
                              "ORDER BY id", (customer_id,))
        return "\n".join(f"order {r['id']}: {r['quantity']} x {r['sku']}" for r in rows) \
            or "No orders."

    def goal_reached(self):
        orders = self._db.query("SELECT customer_id, sku, quantity FROM orders")
        stock = self._db.scalar("SELECT stock FROM products WHERE sku = ?", (self._sku,))
        return (orders == [{"customer_id": self._customer_id, "sku": self._sku,
                            "quantity": self._quantity}]
                and stock == self._stock_before - self._quantity)

    def solution(self):
        return (f"1. search_products(text='{self._item}') "
                f"2. find_customer(name='{self._customer}') "
                f"3. place_order(customer_id={self._customer_id}, sku='{self._sku}', "
                f"quantity={self._quantity}) 4. <answer>done</answer>")
