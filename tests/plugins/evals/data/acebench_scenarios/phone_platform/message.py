"""Test fixture in the shape of ACEBench's ``MessageApi`` (made up)."""

from model_inference.multi_turn.scenariosen.phone_platform.base_api import BaseApi


class MessageApi(BaseApi):
    def __init__(self):
        super().__init__()
        self.user_list = {"Omar": "USR1", "Pia": "USR2"}
        self.inbox = {}
        self.message_id_counter = 0

    def send_message(self, sender_name: str, receiver_name: str, message: str):
        if not self.wifi:
            return {"status": False, "message": "Wi-Fi is off, the message was not sent"}
        if sender_name not in self.user_list or receiver_name not in self.user_list:
            return {"status": False, "message": "Unknown user"}
        self.message_id_counter += 1
        self.inbox[self.message_id_counter] = {"sender_id": self.user_list[sender_name],
                                               "receiver_id": self.user_list[receiver_name],
                                               "message": message}
        return {"status": True, "message": f"Message sent to {receiver_name}"}
